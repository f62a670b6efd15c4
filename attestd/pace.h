/*
 * pace: the token bucket that limits the rounds new measurements bring forward.
 *
 * A machine that measures something once gets its round at once (detection within a look of
 * --watch); a machine that measures all the time sends at most `burst` rounds at once and then
 * one per `gap` seconds, never one per look. The heartbeat rounds of --interval spend nothing:
 * they prove liveness and come whatever the bucket holds.
 *
 * Pure: the caller passes the time (seconds on a monotonic clock), so tests need no sleeping.
 */
#ifndef ATTESTD_PACE_H
#define ATTESTD_PACE_H

struct pace {
	double tokens; /* 0..burst */
	double burst;  /* the bucket's size: rounds that may follow each other without a gap */
	double gap;    /* seconds to earn one token back, > 0 */
	double last;   /* when tokens was last brought up to date */
};

/* A full bucket of `burst` (>= 1) tokens, one earned back every `gap_s` (>= 1) seconds. */
void pace_init(struct pace *p, unsigned burst, unsigned gap_s, double now);

/* Seconds from `now` until a round may be brought forward; 0 when it may be now. */
double pace_wait(const struct pace *p, double now);

/* Spends one token at `now`. Returns -1 (nothing spent) when pace_wait(now) is not 0. */
int pace_spend(struct pace *p, double now);

#endif
