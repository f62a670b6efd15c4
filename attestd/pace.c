/* Token bucket for rounds brought forward (pace.h). */
#include "attestd/pace.h"

void pace_init(struct pace *p, unsigned burst, unsigned gap_s, double now)
{
	p->burst = burst ? (double)burst : 1.0;
	p->gap = gap_s ? (double)gap_s : 1.0;
	p->tokens = p->burst;
	p->last = now;
}

/* The tokens held at `now`: what was left plus what the time since earned, up to the burst.
 * A clock that seems to go back earns nothing (never a token from nowhere). */
static double tokens_at(const struct pace *p, double now)
{
	double earned = now > p->last ? (now - p->last) / p->gap : 0.0;
	double t = p->tokens + earned;

	return t > p->burst ? p->burst : t;
}

double pace_wait(const struct pace *p, double now)
{
	double t = tokens_at(p, now);

	return t >= 1.0 ? 0.0 : (1.0 - t) * p->gap;
}

int pace_spend(struct pace *p, double now)
{
	double t = tokens_at(p, now);

	if (t < 1.0)
		return -1;
	p->tokens = t - 1.0;
	if (now > p->last)
		p->last = now;
	return 0;
}
