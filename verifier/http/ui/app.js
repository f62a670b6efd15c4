/*
 * The verifier's operator page: fleet (filtered by state, label or policy; a policy assigned to
 * every agent with a label), one agent (verdict timeline, violations, policy, labels), one policy
 * (as the verifier enforces it, its versions with what each changed), the named policies (an
 * unused one deleted), the registrations (admission) and the violations queue, over the same
 * REST API as attestctl, with the operator token.
 *
 * Rules this file keeps:
 *  - Every string from the API is untrusted (IMA paths are whatever a guest measured). It reaches
 *    the page only as text: text nodes, textContent, setAttribute on inert attributes. Nothing
 *    here assigns innerHTML, outerHTML or uses document.write, eval or inline handlers (the
 *    server's Content-Security-Policy would refuse inline script anyway).
 *  - Control characters and bidi overrides in API strings are shown escaped (\xNN, \uNNNN) so
 *    a path cannot hide or reorder what an operator reads. Bytes that are not UTF-8 arrive
 *    already escaped by the verifier as the text \xNN, the same notation.
 *  - The list endpoints return everything (agents) or up to a limit (violations, verdicts); the
 *    page keeps the data and renders one page of rows at a time, so 1,000 agents stay fast.
 *  - The token lives in sessionStorage (this tab only) and goes out as Authorization: Bearer.
 *  - Approval asks its scope, "this agent only" preselected (an amendment over the agent's
 *    policy); widening the shared policy must be chosen. Every policy change can be rolled back
 *    from the agent view's histories, each step confirmed by a second click. A change to many
 *    agents at once (a policy assigned by label) first shows how many it changes, from the
 *    API's own dry run, and waits for a second click.
 *  - An agent the API shows "stale" or "rejudging" is never shown with a green verdict: its last
 *    verdict is only what was said before it fell silent, or under a policy version that no
 *    longer judges it.
 */
'use strict';

(function () {
	const TOKEN_KEY = 'attest.operator_token';
	const PAGE = 50;
	const LIST_MAX = 10000;           /* the API's largest ?limit= */
	const VERDICTS_FIRST = 50;
	const AUTO_REFRESH = 10;          /* seconds between fleet reloads when auto-refresh is on */
	const CHANGES_AUTO = 10;          /* policy versions whose changes are shown without a click */

	const $ = (id) => document.getElementById(id);

	/*
	 * What each verdict reason means, shown as the reason's tooltip. The keys are exactly the
	 * reasons of verifier/facts/reasons.h (tests/unit/test_reasons.c checks it).
	 */
	const REASON_LABELS = {
		bad_signature: 'Quote not signed by this agent\'s key',
		malformed_signature: 'Quote signature does not parse',
		unsupported_algorithm: 'Quote signed with a refused hash',
		nonce_mismatch: 'Quote made for another challenge',
		bad_magic: 'Signed data not made by a TPM',
		bad_type: 'Signed data is not a quote',
		pcr_selection_mismatch: 'Quote covers other PCRs than asked',
		pcr_digest_mismatch: 'PCR values do not match the quote',
		malformed_attest: 'Quote does not parse',
		reset_count_rollback: 'TPM reset counter went back',
		restart_count_rollback: 'TPM restart counter went back',
		clock_rollback: 'TPM clock went back',
		reboot: 'Machine rebooted; list restarts',
		log_offset_mismatch: 'List sent from the wrong entry',
		log_records_deleted: 'Entries deleted from the machine and not exported',
		log_corrupt: 'Measurement list corrupt',
		pcr_mismatch: 'List does not replay to PCR 10',
		log_incomplete: 'List larger than one request: the rest comes next round',
		boot_aggregate_missing: 'List does not start with boot_aggregate',
		tpm_bypass: 'IMA ran without a TPM',
		boot_aggregate_unverified: 'Boot measurements not quoted',
		boot_aggregate_mismatch: 'boot_aggregate does not match PCR 0-9',
		boot_aggregate_not_allowed: 'Boot not pinned by the policy',
		violation_entry: 'IMA measurement violation',
		unjudgeable_entry: 'Entry the policy cannot judge',
		not_in_allowlist: 'File not in the policy',
		digest_mismatch: 'File content not in the policy',
		bad_file_signature: 'File signature invalid (modified after signing?)',
		unknown_signing_key: 'File signed by an untrusted key',
		missing_file_signature: 'Unsigned file where signatures are required',
		keyring_key_not_allowed: 'Key loaded onto a keyring not in the policy',
		open_violations: 'Violations await review',
		more_reasons: 'More reasons than listed',
		violations_unrecorded: 'More files broke the policy than are stored one by one',
		ima_pcr_not_extended: 'PCR 10 never followed the list',
		boot_log_missing: 'No firmware event log',
		boot_log_corrupt: 'Firmware event log corrupt',
		boot_log_mismatch: 'Event log does not replay to PCR 0-9',
		boot_not_in_policy: 'Boot not in the boot policy',
		boot_unverifiable: 'Boot event cannot be judged',
		secure_boot_mismatch: 'Secure Boot in the wrong state',
	};
	const reasonLabel = (code) => REASON_LABELS[code] || String(code);

	/* ---- text and elements ---------------------------------------------------------- */

	/* Makes every character visible: C0/C1 controls, DEL, zero-width and bidi controls. */
	function visible(v) {
		const s = v === null || v === undefined ? '' : String(v);
		return s.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
			(c) => {
				const n = c.charCodeAt(0);
				return n < 0x100 ? '\\x' + n.toString(16).padStart(2, '0')
					: '\\u' + n.toString(16).padStart(4, '0');
			});
	}

	/* el('td', {class: 'x', title: t}, child...): children are nodes or text (never markup). */
	function el(tag, attrs, ...children) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === undefined || v === null || v === false)
				continue;
			if (k === 'class')
				e.className = v;
			else if (k === 'onclick')
				e.addEventListener('click', v);
			else
				e.setAttribute(k, String(v));
		}
		for (const c of children) {
			if (c === null || c === undefined || c === false)
				continue;
			e.appendChild(c instanceof Node ? c : document.createTextNode(visible(c)));
		}
		return e;
	}

	function clear(node) {
		while (node.firstChild)
			node.removeChild(node.firstChild);
		return node;
	}

	function pad2(n) {
		return String(n).padStart(2, '0');
	}

	function absTime(t) {
		if (!t || t <= 0)
			return 'never';
		const d = new Date(t * 1000);
		return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' +
			pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
	}

	function relTime(t) {
		if (!t || t <= 0)
			return 'never';
		const s = Math.round(Date.now() / 1000 - t);
		if (s < 0)
			return 'in the future';
		if (s < 60)
			return s + ' s ago';
		if (s < 3600)
			return Math.floor(s / 60) + ' min ago';
		if (s < 86400)
			return Math.floor(s / 3600) + ' h ago';
		return Math.floor(s / 86400) + ' d ago';
	}

	function timeCell(t) {
		return el('span', { title: absTime(t) }, relTime(t));
	}

	function badge(kind, text) {
		return el('span', { class: 'badge ' + kind }, text);
	}

	function verdictBadge(v) {
		if (v === 'trusted')
			return badge('ok', 'trusted');
		if (v === 'untrusted')
			return badge('bad', 'untrusted');
		return badge('none', 'no verdict');
	}

	function policyLink(name) {
		return el('a', { href: '#/policy/' + encodeURIComponent(String(name)), class: 'mono',
			title: 'its versions and what each changed' }, name);
	}

	function agentLink(id) {
		return el('a', { href: '#/agent/' + encodeURIComponent(String(id)), class: 'mono' }, id);
	}

	/* An agent's or registration's labels as [key, value] pairs, sorted by key. */
	function labelPairs(labels) {
		if (!labels || typeof labels !== 'object' || Array.isArray(labels))
			return [];
		return Object.keys(labels).sort().map((k) => [k, String(labels[k])]);
	}

	/* The labels as chips of text "KEY=VALUE"; onPick(pair), when given, makes each a button. */
	function labelChips(labels, onPick) {
		const out = el('span', { class: 'labels' });
		for (const [k, v] of labelPairs(labels)) {
			if (out.firstChild)
				out.appendChild(document.createTextNode(' '));
			out.appendChild(onPick
				? el('button', { type: 'button', class: 'label', title: 'show only the agents labelled so',
					onclick: () => onPick([k, v]) }, k + '=' + v)
				: el('span', { class: 'label' }, k + '=' + v));
		}
		return out;
	}

	/* "KEY=VALUE ..." typed by the operator, as an object (null when one word is not KEY=VALUE;
	 * the verifier checks the characters and says which it refuses). */
	function parseLabels(text) {
		const o = {};
		for (const w of String(text).trim().split(/\s+/).filter((x) => x)) {
			const i = w.indexOf('=');
			if (i <= 0 || i === w.length - 1)
				return null;
			o[w.slice(0, i)] = w.slice(i + 1);
		}
		return o;
	}

	/* The versions that judged a verdict, or judge an agent now: "policy NAME vN (+ amendment vM)". */
	function versionsText(policy, pv, av) {
		return 'policy ' + policy + ' v' + pv + (Number(av) > 0 ? ' + amendment v' + av : '');
	}

	function setStatus(text, isError) {
		const s = $('status');
		s.textContent = visible(text);
		s.className = isError ? 'error' : '';
	}

	/* ---- API ------------------------------------------------------------------------ */

	class ApiError extends Error {
		constructor(status, code, message) {
			super(message);
			this.status = status;
			this.code = code;
		}
	}

	function token() {
		return sessionStorage.getItem(TOKEN_KEY) || '';
	}

	/* body: an object sent as JSON (POST), or undefined. */
	async function api(method, path, body) {
		let r;
		const headers = { Authorization: 'Bearer ' + token() };
		if (body !== undefined)
			headers['Content-Type'] = 'application/json';
		try {
			r = await fetch(path, {
				method: method,
				headers: headers,
				body: body === undefined ? undefined : JSON.stringify(body),
				cache: 'no-store',
				credentials: 'omit',
			});
		} catch (e) {
			throw new ApiError(0, 'network', 'the verifier does not answer (' + e.message + ')');
		}
		let answer = null;
		try {
			answer = await r.json();
		} catch (e) {
			answer = null;
		}
		if (r.status === 401) {
			sessionStorage.removeItem(TOKEN_KEY);
			showLogin('The verifier refused the token; enter it again.');
			throw new ApiError(401, 'unauthorized', 'token refused');
		}
		if (!r.ok) {
			const err = answer && answer.error ? answer.error : {};
			throw new ApiError(r.status, String(err.code || 'http_' + r.status),
				String(err.message || r.statusText));
		}
		if (answer === null || typeof answer !== 'object')
			throw new ApiError(r.status, 'bad_json', 'the verifier sent something that is not JSON');
		return answer;
	}

	function failed(e) {
		if (e instanceof ApiError && e.status === 401)
			return;
		setStatus(e instanceof ApiError ? e.code + ': ' + e.message : String(e), true);
	}

	/* ---- paging --------------------------------------------------------------------- */

	/* Renders prev/next for items.length rows at page `page`; onPage(newPage) re-renders. */
	function pager(node, total, page, onPage) {
		clear(node);
		const pages = Math.max(1, Math.ceil(total / PAGE));
		const first = total ? page * PAGE + 1 : 0;
		const last = Math.min(total, (page + 1) * PAGE);
		node.appendChild(el('button', { type: 'button', class: 'prev', disabled: page <= 0,
			onclick: () => onPage(page - 1) }, '\u2039 prev'));
		node.appendChild(el('span', { class: 'range' }, first + '\u2013' + last + ' of ' + total));
		node.appendChild(el('button', { type: 'button', class: 'next', disabled: page >= pages - 1,
			onclick: () => onPage(page + 1) }, 'next \u203a'));
	}

	function clampPage(page, total) {
		const pages = Math.max(1, Math.ceil(total / PAGE));
		return Math.min(Math.max(0, page), pages - 1);
	}

	/* ---- fleet ---------------------------------------------------------------------- */

	/* policyWanted: the policy filter to choose at the next load (a policy's agent count clicked). */
	const fleet = { agents: [], page: 0, policyWanted: null };

	/*
	 * A stale agent is never shown green: its last verdict is only what it said before it went
	 * silent. Nor one awaiting re-judgement: its last verdict was made under policy or amendment
	 * versions that no longer judge it (its next round judges its whole boot again).
	 */
	function fleetVerdict(a) {
		if (a.state === 'stale')
			return el('span', null, badge('bad', 'stale'), ' ',
				el('span', { class: 'hint' }, 'was ' + (a.last_verdict || 'no verdict')));
		if (a.rejudging === true || a.state === 'rejudging') {
			const j = a.judged_by && typeof a.judged_by === 'object' ? a.judged_by : null;
			return el('span', { title: 'its policy changed since its last verdict; its next round judges it again' },
				badge('wait', 'rejudging'), ' ',
				el('span', { class: 'hint' }, 'was ' + (a.last_verdict || 'no verdict') +
					(j ? ' under ' + versionsText(j.policy, j.policy_version, j.amendment_version) : '')));
		}
		return verdictBadge(a.last_verdict);
	}

	/* The last verdict's reasons (codes, each once; the API sends no details in the list): the
	 * first few, each with its meaning as a tooltip, and how many more. */
	const FLEET_REASONS = 3;
	function fleetReasons(a) {
		const codes = Array.isArray(a.last_reasons) ? a.last_reasons.map(String) : [];
		const out = el('span', null);
		codes.slice(0, FLEET_REASONS).forEach((c, i) => {
			if (i)
				out.appendChild(document.createTextNode(' '));
			out.appendChild(el('span', { class: 'code', title: reasonLabel(c) }, c));
		});
		if (codes.length > FLEET_REASONS)
			out.appendChild(el('span', { class: 'hint', title: codes.slice(FLEET_REASONS).join(' ') },
				' +' + (codes.length - FLEET_REASONS) + ' more'));
		return out;
	}

	function agentRank(a) {
		if (a.last_verdict === 'untrusted' || a.state === 'stale')
			return 0;
		if (a.open_violations > 0)
			return 1;
		if (a.state !== 'active')
			return 2;
		if (a.last_verdict !== 'trusted')
			return 3;
		return 4;
	}

	/* The label filter: "KEY=VALUE" (that label exactly) or "KEY" (any value), or '' (none). */
	function labelFilter() {
		const f = $('fleet-label').value.trim();
		const i = f.indexOf('=');
		return i < 0 ? { key: f, value: null, text: f } : { key: f.slice(0, i), value: f.slice(i + 1), text: f };
	}

	function fleetMatches(a) {
		const q = $('fleet-filter').value.trim().toLowerCase();
		if (q && String(a.agent_id).toLowerCase().indexOf(q) < 0)
			return false;
		const pf = $('fleet-policy').value;
		if (pf && String(a.policy) !== pf)
			return false;
		const lf = labelFilter();
		if (lf.key) {
			const labels = a.labels && typeof a.labels === 'object' ? a.labels : {};
			if (!Object.prototype.hasOwnProperty.call(labels, lf.key) ||
			    (lf.value !== null && String(labels[lf.key]) !== lf.value))
				return false;
		}
		switch ($('fleet-show').value) {
		case 'untrusted': return a.last_verdict === 'untrusted';
		case 'violations': return a.open_violations > 0;
		case 'noverdict': return a.last_verdict !== 'trusted' && a.last_verdict !== 'untrusted';
		case 'pending': return a.state === 'pending';
		case 'stale': return a.state === 'stale';
		case 'rejudging': return a.rejudging === true || a.state === 'rejudging';
		default: return true;
		}
	}

	function renderSummary(agents) {
		const n = (f) => agents.filter(f).length;
		const open = agents.reduce((s, a) => s + (Number(a.open_violations) || 0), 0);
		const parts = [
			['total', agents.length + ' agents', ''],
			['trusted', n((a) => a.last_verdict === 'trusted' && a.state === 'active') + ' trusted', 'ok'],
			['stale', n((a) => a.state === 'stale') + ' stale', n((a) => a.state === 'stale') ? 'bad' : 'ok'],
			['untrusted', n((a) => a.last_verdict === 'untrusted') + ' untrusted', 'bad'],
			['noverdict', n((a) => a.last_verdict !== 'trusted' && a.last_verdict !== 'untrusted') +
				' without a verdict', 'none'],
			['pending', n((a) => a.state === 'pending') + ' pending', 'none'],
			['rejudging', n((a) => a.rejudging === true || a.state === 'rejudging') + ' rejudging', 'none'],
			['open', open + ' open violations', open ? 'bad' : 'ok'],
		];
		const s = clear($('fleet-summary'));
		for (const [key, text, kind] of parts)
			s.appendChild(el('span', { class: 'stat ' + kind, 'data-stat': key }, text));
		setOpenCount(open);
	}

	function setOpenCount(n) {
		$('open-count').textContent = n > 0 ? String(n) : '';
	}

	function renderFleet() {
		const rows = fleet.agents.filter(fleetMatches);
		fleet.page = clampPage(fleet.page, rows.length);
		pager($('fleet-pager'), rows.length, fleet.page, (p) => { fleet.page = p; renderFleet(); });
		const tbody = clear($('fleet-rows'));
		for (const a of rows.slice(fleet.page * PAGE, (fleet.page + 1) * PAGE)) {
			const open = Number(a.open_violations) || 0;
			tbody.appendChild(el('tr', { 'data-agent': visible(a.agent_id) },
				el('td', { class: 'agent' }, agentLink(a.agent_id)),
				el('td', { class: 'state' + (a.state === 'stale' ? ' bad' : '') }, a.state),
				el('td', { class: 'verdict' }, fleetVerdict(a)),
				el('td', { class: 'reasons' }, fleetReasons(a)),
				el('td', { class: 'when' }, timeCell(a.last_verdict_at)),
				el('td', { class: 'seen', title: 'expected every ' + a.interval + ' s' },
					a.state === 'pending' ? 'never' : timeCell(a.last_seen)),
				el('td', { class: 'num boot' }, String(a.boot_number)),
				el('td', { class: 'num open' + (open ? ' bad' : '') }, String(open)),
				el('td', { class: 'policy' }, policyLink(a.policy)),
				el('td', { class: 'labels' }, labelChips(a.labels, pickLabel))));
		}
		$('fleet-empty').hidden = rows.length > 0;
	}

	/* A label chip clicked in the fleet: filter by it. */
	function pickLabel(pair) {
		$('fleet-label').value = visible(pair[0] + '=' + pair[1]);
		fleet.page = 0;
		renderFleet();
		renderAssign();
	}

	/*
	 * Assigning a policy to every agent with the label the fleet is filtered by (POST
	 * /v1/policies/NAME/assign): the API's dry run first says how many agents it would change,
	 * and which; only the second click applies it. The box is redrawn when the label filter
	 * changes, never by the auto-refresh (an armed confirmation stays under the pointer).
	 */
	async function renderAssign() {
		const box = $('fleet-assign');
		const lf = labelFilter();
		clear(box);
		box.hidden = !(lf.key && lf.value);
		if (box.hidden)
			return;
		const label = lf.key + '=' + lf.value;
		const select = el('select', { class: 'assign-policy' });
		const preview = async () => {
			const name = select.value;
			if (!name)
				return;
			const path = '/v1/policies/' + encodeURIComponent(name) + '/assign';
			let r;
			try {
				r = await api('POST', path, { label: label, apply: false });
			} catch (e) {
				failed(e);
				return;
			}
			const ids = Array.isArray(r.agents) ? r.agents.map(String) : [];
			clear(box);
			box.appendChild(el('span', { class: 'ask count', 'data-count': ids.length },
				ids.length + (ids.length === 1 ? ' agent' : ' agents') + ' labelled ' + label +
				' would be assigned policy ' + name + ' (' + r.matching + ' with the label; the others use it already)' +
				(ids.length ? ': ' + someOf(ids) : '') + '. '));
			if (ids.length)
				box.appendChild(el('button', { type: 'button', class: 'confirm assign', onclick: async (ev) => {
					ev.target.disabled = true;
					try {
						const done = await api('POST', path, { label: label, apply: true });
						const n = Array.isArray(done.agents) ? done.agents.length : 0;
						await loadFleet();
						setStatus('policy ' + name + ' assigned to ' + n + (n === 1 ? ' agent' : ' agents') +
							' labelled ' + label);
					} catch (e) {
						failed(e);
					}
					renderAssign();
				} }, 'Confirm: assign to ' + ids.length));
			box.appendChild(el('button', { type: 'button', class: 'cancel', onclick: renderAssign }, 'Cancel'));
		};
		box.appendChild(el('span', { class: 'ask' }, 'Assign to every agent labelled ' + label + ' the policy '));
		box.appendChild(select);
		box.appendChild(el('button', { type: 'button', class: 'assign', onclick: preview }, 'Assign\u2026'));
		try {
			const r = await api('GET', '/v1/policies');
			for (const p of Array.isArray(r.policies) ? r.policies : [])
				select.appendChild(el('option', { value: visible(p && p.name) }, p && p.name));
		} catch (e) {
			failed(e);
		}
	}

	async function loadFleet() {
		setStatus('loading agents\u2026');
		const r = await api('GET', '/v1/agents');
		const agents = Array.isArray(r.agents) ? r.agents : [];
		agents.sort((x, y) => agentRank(x) - agentRank(y) ||
			(Number(y.open_violations) || 0) - (Number(x.open_violations) || 0) ||
			String(x.agent_id).localeCompare(String(y.agent_id)));
		fleet.agents = agents;
		/* The policy filter offers the policies the fleet's agents use; the one chosen stays. */
		const sel = $('fleet-policy');
		const chosen = fleet.policyWanted !== null ? fleet.policyWanted : sel.value;
		fleet.policyWanted = null;
		const used = [...new Set(agents.map((a) => visible(a.policy)))].sort();
		while (sel.options.length > 1)
			sel.remove(1);
		for (const n of chosen && used.indexOf(chosen) < 0 ? used.concat([chosen]) : used)
			sel.appendChild(el('option', { value: n }, n));
		sel.value = chosen;
		renderSummary(agents);
		renderFleet();
		setStatus(agents.length + ' agents, loaded ' + absTime(Date.now() / 1000));
	}

	/* ---- violations (queue and per agent) -------------------------------------------- */

	const queue = { items: [], page: 0 };

	function shortDigest(d) {
		const s = String(d || '');
		const c = s.indexOf(':');
		const hex = c >= 0 ? s.slice(c + 1) : s;
		return hex.length > 16 ? s.slice(0, c + 1) + hex.slice(0, 12) + '\u2026' : s;
	}

	/* What an approval or dismissal did, in words: its scope and what it wrote. */
	function outcome(r) {
		if (r.state !== 'approved')
			return String(r.state);
		if (r.scope === 'policy')
			return 'approved \u2192 policy ' + r.policy + ' v' + r.policy_version + ' (' +
				r.policy_agents + (Number(r.policy_agents) === 1 ? ' agent' : ' agents') + ')';
		return 'approved \u2192 this agent only (amendment v' + r.amendment_version +
			' over policy ' + r.policy + ')';
	}

	/* After an action: the row shows what happened and loses its buttons. */
	function actionDone(row, cell, result) {
		clear(cell);
		row.classList.add('done');
		row.querySelector('td.vstate').textContent = visible(result.state);
		cell.appendChild(el('span', { class: 'result' }, outcome(result)));
	}

	/*
	 * Approve or dismiss, each confirmed by a second click. Approval asks its scope: this agent
	 * only (preselected: an amendment over the agent's policy) or the agent's policy, which every
	 * agent assigned to it shares. A reason no policy entry fixes offers dismissal only.
	 */
	function actions(v, row, cell, onChange) {
		clear(cell);
		if (v.state !== 'open')
			return;
		const arm = (verb) => {
			clear(cell);
			let scope = null;
			if (verb === 'approve') {
				const name = 'scope-' + v.id;
				const option = (value, text, checked) => el('label', { class: 'scope' },
					el('input', { type: 'radio', name: name, value: value, checked: checked }), ' ', text);
				scope = el('span', { class: 'scopes' },
					option('agent', 'this agent (' + v.agent_id + ') only', true),
					option('policy', 'its policy (every agent using it)', false));
				cell.appendChild(el('span', { class: 'ask' }, 'Allow this file for'));
				cell.appendChild(scope);
			} else {
				cell.appendChild(el('span', { class: 'ask' }, 'Close without changing a policy?'));
			}
			cell.appendChild(el('button', { type: 'button', class: 'confirm ' + verb,
				onclick: (ev) => act(verb, ev.target, scope) }, 'Confirm ' + verb));
			cell.appendChild(el('button', { type: 'button', class: 'cancel',
				onclick: () => actions(v, row, cell, onChange) }, 'Cancel'));
		};
		const act = async (verb, button, scope) => {
			button.disabled = true;
			const picked = scope ? scope.querySelector('input:checked') : null;
			try {
				const r = await api('POST', '/v1/violations/' + encodeURIComponent(String(v.id)) +
					'/' + verb, picked ? { scope: picked.value } : undefined);
				v.state = r.state;
				actionDone(row, cell, r);
				setStatus('violation ' + v.id + ': ' + outcome(r));
				onChange();
			} catch (e) {
				failed(e);
				actions(v, row, cell, onChange);
			}
		};
		if (v.approvable !== false)
			cell.appendChild(el('button', { type: 'button', class: 'approve',
				onclick: () => arm('approve') }, 'Approve'));
		else
			cell.appendChild(el('span', { class: 'hint', title: reasonLabel(v.reason) },
				'no policy entry fixes this '));
		cell.appendChild(el('button', { type: 'button', class: 'dismiss',
			onclick: () => arm('dismiss') }, 'Dismiss'));
		cell.appendChild(el('button', { type: 'button', class: 'bulk',
			title: 'approve or dismiss this file (path and digest) for every agent it is open on',
			onclick: () => bulk(v, cell, () => actions(v, row, cell, onChange), onChange) },
			'Every agent\u2026'));
	}

	/*
	 * This file (path, digest) decided for every agent it is open on, or only for the agents of
	 * the violation's agent's policy, as `attestctl approve|dismiss --path P --digest D
	 * [--policy NAME]` does (the API has no bulk route): the open violations of the file
	 * (GET /v1/violations) are counted and named first; the second click decides each in its own
	 * request (approve: for its agent alone), then says how many were decided and names the
	 * ones refused. Nothing is decided before that click.
	 */
	function bulk(v, cell, back, onChange) {
		clear(cell);
		const onlyPolicy = el('input', { type: 'checkbox', class: 'only-policy' });
		const verb = el('select', { class: 'bulk-verb' },
			v.approvable !== false ? el('option', { value: 'approve' }, 'approve') : null,
			el('option', { value: 'dismiss' }, 'dismiss'));
		const plan = el('span', { class: 'bulk-plan' });
		const same = (o) => o && o.state === 'open' && o.path === v.path && o.digest === v.digest &&
			Boolean(o.path_escaped) === Boolean(v.path_escaped);
		const count = async () => {
			clear(plan);
			try {
				const r = await api('GET', '/v1/violations?state=open&limit=' + LIST_MAX);
				const all = Array.isArray(r.violations) ? r.violations : [];
				if (all.length >= LIST_MAX) {
					plan.appendChild(el('span', { class: 'ask count' }, LIST_MAX +
						' open violations or more: decide them one by one or with attestctl'));
					return;
				}
				let of = all.filter(same);
				let policy = null;
				if (onlyPolicy.checked) {
					const a = await api('GET', '/v1/agents/' + encodeURIComponent(String(v.agent_id)));
					policy = visible(a.policy);
					const p = await api('GET', '/v1/agents?policy=' + encodeURIComponent(policy));
					const ids = new Set((Array.isArray(p.agents) ? p.agents : []).map((x) => x.agent_id));
					of = of.filter((o) => ids.has(o.agent_id));
				}
				const n = of.length;
				const what = verb.value;
				plan.appendChild(el('span', { class: 'ask count' }, n + ' open ' +
					(n === 1 ? 'violation' : 'violations') + ' of this file' +
					(policy !== null ? ' on agents of policy ' + policy : '') + ': ' +
					of.map((o) => o.agent_id + ' (#' + o.id + ')').join(', ') + '.'));
				if (!n)
					return;
				plan.appendChild(el('button', { type: 'button', class: 'confirm bulk ' + what,
					onclick: async (ev) => {
						ev.target.disabled = true;
						const refused = [];
						for (const o of of) {
							try {
								await api('POST', '/v1/violations/' +
									encodeURIComponent(String(o.id)) + '/' + what);
							} catch (e) {
								refused.push(o.agent_id + ' (#' + o.id + ': ' +
									(e && e.message ? e.message : String(e)) + ')');
							}
						}
						clear(cell);
						cell.appendChild(el('span', { class: 'result bulk' }, what + ': ' +
							(n - refused.length) + ' of ' + n + ' decided' +
							(refused.length ? '; refused: ' + refused.join(', ') : '')));
						setStatus(what + ' ' + v.path + ': ' + (n - refused.length) + ' of ' + n +
							' decided' + (refused.length ? ', ' + refused.length + ' refused' : ''));
						onChange();
					} }, 'Confirm: ' + what + ' for ' + n + (n === 1 ? ' agent' : ' agents')));
			} catch (e) {
				failed(e);
			}
		};
		onlyPolicy.onchange = count;
		verb.onchange = count;
		cell.appendChild(el('span', { class: 'ask' }, 'This file for every agent: '));
		cell.appendChild(verb);
		cell.appendChild(el('label', { class: 'scope' }, onlyPolicy, ' only agents of its policy'));
		cell.appendChild(plan);
		cell.appendChild(el('button', { type: 'button', class: 'cancel', onclick: back }, 'Cancel'));
		count();
	}

	/*
	 * For a digest_mismatch: what the agent's policy (and its amendment) list for the path now,
	 * as the verifier looked it up (GET /v1/violations: .expected), under the digest measured.
	 */
	function expectedDigests(e) {
		const listed = (Array.isArray(e.digests) ? e.digests : [])
			.concat(Array.isArray(e.amendment_digests) ? e.amendment_digests : []).map(String);
		const from = 'policy ' + e.policy + ' v' + e.policy_version +
			(Number(e.amendment_version) > 0 ? ' + amendment v' + e.amendment_version : '');
		return el('div', { class: 'expected', title: 'listed for this path by ' + from + ' now:\n' +
			(listed.join('\n') || 'nothing') },
			el('span', { class: 'hint' }, 'expected '),
			el('span', { class: 'listed' }, listed.length ? listed.map(shortDigest).join('  ') : 'none listed now'),
			el('span', { class: 'hint from' }, ' (' + from + ')'));
	}

	function violationTable(items, withAgent, onChange) {
		const head = ['id'];
		if (withAgent)
			head.push('agent');
		head.push('reason', 'path', 'digest', 'boot / entry', 'seen', 'state', '');
		const tbody = el('tbody');
		for (const v of items) {
			const row = el('tr', { 'data-violation': String(v.id) });
			const cell = el('td', { class: 'actions' });
			row.appendChild(el('td', { class: 'num id' }, String(v.id)));
			if (withAgent)
				row.appendChild(el('td', { class: 'agent' }, agentLink(v.agent_id)));
			row.appendChild(el('td', { class: 'reason', title: reasonLabel(v.reason) }, v.reason));
			row.appendChild(el('td', { class: 'path mono', title: v.path_escaped
				? 'not UTF-8: shown escaped (\\xNN a byte, \\\\ a backslash); raw bytes ' + v.path_hex
				: null }, el('span', { class: 'text' }, v.path),
				v.path_escaped ? el('span', { class: 'hint' }, ' (not UTF-8)') : null,
				v.recurs ? el('span', { class: 'hint recurs' }, ' recurs after #' + v.recurs) : null,
				// A policy built from packages says which package owns the path (GET /v1/violations: .explanation).
				typeof v.explanation === 'string' ? el('div', { class: 'explanation' }, v.explanation) : null));
			const exp = v.expected && typeof v.expected === 'object' ? v.expected : null;
			row.appendChild(el('td', { class: 'digest mono', title: visible(v.digest) },
				el('span', { class: 'measured' }, shortDigest(v.digest)), exp ? expectedDigests(exp) : null));
			row.appendChild(el('td', { class: 'num' }, v.boot_number + ' / ' + v.entry));
			row.appendChild(el('td', { class: 'seen' }, timeCell(v.last_seen),
				Number(v.count) > 1 ? el('span', { class: 'hint' }, ' \u00d7' + v.count) : null));
			row.appendChild(el('td', { class: 'vstate' }, v.state));
			row.appendChild(cell);
			actions(v, row, cell, onChange);
			tbody.appendChild(row);
		}
		return el('table', { class: 'violations' },
			el('thead', null, el('tr', null, ...head.map((h) => el('th', null, h)))), tbody);
	}

	function queueMatches(v) {
		const q = $('viol-filter').value.trim().toLowerCase();
		if (!q)
			return true;
		return [v.agent_id, v.path, v.reason, v.digest].some(
			(f) => String(f || '').toLowerCase().indexOf(q) >= 0);
	}

	function renderQueue() {
		const items = queue.items.filter(queueMatches);
		queue.page = clampPage(queue.page, items.length);
		pager($('viol-pager'), items.length, queue.page, (p) => { queue.page = p; renderQueue(); });
		const list = clear($('viol-list'));
		if (!items.length) {
			list.appendChild(el('p', { class: 'empty' }, 'No ' + $('viol-state').value +
				' violations.'));
			return;
		}
		if (queue.items.length >= LIST_MAX)
			list.appendChild(el('p', { class: 'hint' }, 'Showing the first ' + LIST_MAX +
				' (the most the API returns at once); act on these to see more.'));
		list.appendChild(violationTable(items.slice(queue.page * PAGE, (queue.page + 1) * PAGE),
			true, refreshOpenCount));
	}

	async function loadQueue() {
		const state = $('viol-state').value;
		setStatus('loading ' + state + ' violations\u2026');
		const r = await api('GET', '/v1/violations?state=' + encodeURIComponent(state) +
			'&limit=' + LIST_MAX);
		queue.items = Array.isArray(r.violations) ? r.violations : [];
		renderQueue();
		setStatus(queue.items.length + ' ' + state + ' violations, loaded ' +
			absTime(Date.now() / 1000));
	}

	/* The nav's open count, after an action anywhere. */
	async function refreshOpenCount() {
		try {
			const r = await api('GET', '/v1/agents');
			const agents = Array.isArray(r.agents) ? r.agents : [];
			setOpenCount(agents.reduce((s, a) => s + (Number(a.open_violations) || 0), 0));
		} catch (e) {
			failed(e);
		}
	}

	/* ---- one agent ------------------------------------------------------------------ */

	const agentView = { id: null, limit: VERDICTS_FIRST };

	function fact(dl, name, value) {
		dl.appendChild(el('dt', null, name));
		dl.appendChild(el('dd', null, value));
	}

	/* A verdict as one comparable key: its result, boot, the versions that judged it, and its
	 * reasons' codes and details, in order. */
	function verdictKey(v) {
		const reasons = Array.isArray(v.reasons) ? v.reasons : [];
		return JSON.stringify([v.verdict, v.boot_number, judgedText(v), reasons.map((r) =>
			r && typeof r === 'object' ? [r.code, r.detail] : [String(r)])]);
	}

	/* "policy NAME vN (+ amendment vM)" for what judged a verdict; '' for one from before the
	 * verifier recorded it (judged_by null). */
	function judgedText(v) {
		const j = v && v.judged_by && typeof v.judged_by === 'object' ? v.judged_by : null;
		return j ? versionsText(j.policy, j.policy_version, j.amendment_version) : '';
	}

	/*
	 * Newest first; identical consecutive verdicts (same result, boot and reasons: an agent
	 * saying the same thing every round) are one line with their count and the span of time.
	 */
	function renderTimeline(verdicts) {
		const ol = clear($('timeline'));
		if (!verdicts.length) {
			ol.appendChild(el('li', { class: 'empty' }, 'No verdicts yet.'));
			return;
		}
		const groups = [];
		for (const v of verdicts) {
			const last = groups[groups.length - 1];
			if (last && verdictKey(last.v) === verdictKey(v)) {
				last.n++;
				last.oldest = v;
			} else {
				groups.push({ v: v, n: 1, oldest: v });
			}
		}
		for (const g of groups) {
			const v = g.v;
			const reasons = Array.isArray(v.reasons) ? v.reasons : [];
			const li = el('li', { class: v.trusted ? 'trusted' : 'untrusted', 'data-count': g.n },
				el('div', { class: 'line' },
					el('span', { class: 'time' }, absTime(v.time)),
					' ', verdictBadge(v.verdict),
					g.n > 1 ? el('span', { class: 'count', title: 'identical verdicts since ' +
						absTime(g.oldest.time) }, ' \u00d7 ' + g.n) : null,
					el('span', { class: 'hint' }, ' boot ' + v.boot_number + ', next entry ' +
						v.next_offset + ' (' + relTime(v.time) + ')' +
						(g.n > 1 ? '; the same since ' + absTime(g.oldest.time) : '')),
					judgedText(v) ? el('span', { class: 'hint judged' }, '; judged by ' + judgedText(v)) : null));
			if (reasons.length) {
				const ul = el('ul', { class: 'reasons' });
				for (const r of reasons) {
					const o = r && typeof r === 'object' ? r : { code: String(r) };
					ul.appendChild(el('li', null, el('span', { class: 'code', title: reasonLabel(o.code) }, o.code),
						o.entry !== undefined && o.entry !== null && o.entry >= 0
							? el('span', { class: 'hint' }, ' entry ' + o.entry) : null,
						o.detail ? el('span', { class: 'detail' }, ' ' + o.detail) : null));
				}
				li.appendChild(ul);
			}
			ol.appendChild(li);
		}
	}


	/* A policy's boot section in one line: what it judges. */
	function bootPolicyText(b) {
		if (!b || typeof b !== 'object')
			return 'none: the boot is not judged (the event log must still replay)';
		const parts = [];
		const n = (k, what) => {
			if (Array.isArray(b[k]))
				parts.push(b[k].length + ' ' + what);
		};
		n('kernels', 'kernels');
		n('boot_applications', 'boot applications');
		n('firmware', 'firmware events');
		for (const k of ['pk', 'kek', 'db', 'dbx'])
			n(k, k);
		if (b.secure_boot)
			parts.push('Secure Boot ' + b.secure_boot);
		const c = b.cmdline && typeof b.cmdline === 'object' ? b.cmdline : null;
		if (c) {
			const req = Array.isArray(c.required) ? c.required : [];
			const forb = Array.isArray(c.forbidden) ? c.forbidden : [];
			parts.push('command line' + (Array.isArray(c.exact) ? ': ' + c.exact.length + ' exact' : '') +
				(req.length ? ', requires ' + req.join(' ') : '') + (forb.length ? ', forbids ' + forb.join(' ') : ''));
		}
		return parts.length ? parts.join('; ') : 'a firmware event log is required';
	}

	/*
	 * A policy as the verifier enforces it (GET /v1/policies/NAME/enforced: our format whatever
	 * was stored). For an imported Keylime policy: that it was one, what the import could not
	 * enforce as Keylime would, each exclude as written beside the pattern it became, and its
	 * boot_aggregate values as the boot_aggregate list they are (never as a path). env null: none.
	 */
	function renderPolicy(box, name, env) {
		clear(box);
		if (env === null) {
			box.appendChild(el('p', { class: 'hint' }, name === 'default'
				? 'No default policy is configured: every entry is allowed.'
				: 'The verifier has no policy named ' + name + '.'));
			return;
		}
		const p = env && env.policy && typeof env.policy === 'object' ? env.policy : {};
		const digests = p.digests && typeof p.digests === 'object' ? p.digests : {};
		const keylime = env.format === 'keylime';
		if (keylime)
			box.appendChild(el('p', { class: 'keylime' }, 'Imported from a Keylime runtime policy: shown as ' +
				'the verifier enforces it (version ' + env.version + ').'));
		const warnings = Array.isArray(env.warnings) ? env.warnings : [];
		if (warnings.length)
			box.appendChild(el('ul', { class: 'warnings' }, ...warnings.map((w) => el('li', null, w))));
		const paths = Object.keys(digests).sort();
		const excludes = Array.isArray(p.excludes) ? p.excludes.map(String) : [];
		const sources = Array.isArray(env.source_excludes) ? env.source_excludes.map(String) : [];
		const dl = el('dl', { class: 'facts' });
		if (p.description)
			fact(dl, 'description', p.description);
		fact(dl, 'paths', String(paths.length));
		if (keylime && excludes.length && sources.length === excludes.length)
			fact(dl, 'excludes', el('table', { class: 'excludes' },
				el('thead', null, el('tr', null, el('th', null, 'Keylime pattern (re.match)'),
					el('th', null, 'enforced as (whole path)'))),
				el('tbody', null, ...excludes.map((x, i) => el('tr', null,
					el('td', { class: 'source mono' }, sources[i]), el('td', { class: 'enforced mono' }, x))))));
		else
			fact(dl, 'excludes', excludes.length ? el('span', { class: 'excludes mono' }, excludes.join('  ')) : 'none');
		fact(dl, 'digest_only', String(Array.isArray(p.digest_only) ? p.digest_only.length : 0));
		fact(dl, 'violations', String(p.violations || 'fail'));
		fact(dl, 'boot_aggregate', Array.isArray(p.boot_aggregate)
			? el('span', { class: 'boot-aggregate mono', title: p.boot_aggregate.join('\n') },
				p.boot_aggregate.length + (p.boot_aggregate.length === 1 ? ' value: ' : ' values: ') +
				p.boot_aggregate.map(shortDigest).join('  '))
			: String(p.boot_aggregate || 'any-matching-pcrs') + ' (the value the quoted PCRs give)');
		fact(dl, 'boot', bootPolicyText(p.boot));
		box.appendChild(dl);

		const filter = el('input', { type: 'search', placeholder: 'filter paths', spellcheck: 'false' });
		const pg = el('span', { class: 'pager' });
		const tbody = el('tbody');
		let page = 0;
		const draw = () => {
			const q = filter.value.trim().toLowerCase();
			const rows = q ? paths.filter((x) => x.toLowerCase().indexOf(q) >= 0) : paths;
			page = clampPage(page, rows.length);
			pager(pg, rows.length, page, (n) => { page = n; draw(); });
			clear(tbody);
			for (const path of rows.slice(page * PAGE, (page + 1) * PAGE)) {
				const ds = Array.isArray(digests[path]) ? digests[path] : [];
				tbody.appendChild(el('tr', null, el('td', { class: 'path mono' }, path),
					el('td', { class: 'digest mono' }, ds.map(shortDigest).join('  ') ||
						'(pinned to nothing)')));
			}
		};
		filter.addEventListener('input', () => { page = 0; draw(); });
		box.appendChild(el('div', { class: 'toolbar' }, filter, pg));
		box.appendChild(el('table', { class: 'policy' },
			el('thead', null, el('tr', null, el('th', null, 'path'), el('th', null, 'digests'))),
			tbody));
		draw();
	}

	/* The paths of a policy document: "digests" as they are, "digests_hex" decoded for display. */
	function policyPaths(p) {
		const out = [];
		for (const k of Object.keys(p && p.digests && typeof p.digests === 'object' ? p.digests : {}))
			out.push({ path: k, digests: p.digests[k] });
		const hex = p && p.digests_hex && typeof p.digests_hex === 'object' ? p.digests_hex : {};
		for (const k of Object.keys(hex)) {
			/* A path that is not UTF-8: printable ASCII as it is, a backslash doubled, every
			 * other byte \xNN (the verifier keeps valid sequences; this view goes byte by byte). */
			let text = '';
			for (let i = 0; i + 1 < k.length; i += 2) {
				const b = parseInt(k.slice(i, i + 2), 16);
				text += b === 0x5c ? '\\\\' : b >= 0x20 && b < 0x7f ? String.fromCharCode(b)
					: '\\x' + k.slice(i, i + 2);
			}
			out.push({ path: text, digests: hex[k], raw: true });
		}
		return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
	}

	/* One row of a version history: the version, who made it, when, its size, and `cell`. */
	/*
	 * Who wrote a version, and who signed it (verifier(8), SIGNED POLICIES): the first 16 hex
	 * digits of the keyid that verified it (the whole of it as the title), or "unchecked" for
	 * one signed but stored by a verifier without policy signers.
	 */
	function versionRow(v, cell) {
		const signed = v.signed ? el('span', { class: 'signer', title: v.signer || 'no policy signers when stored' },
			v.signer ? ' \u00b7 signed by ' + v.signer.slice(0, 16) : ' \u00b7 signed (unchecked)') : null;
		return el('tr', { 'data-version': String(v.version) },
			el('td', { class: 'num version' }, 'v' + v.version),
			el('td', { class: 'actor' }, v.actor, signed),
			el('td', { class: 'when' }, v.time ? timeCell(v.time) : ''),
			el('td', { class: 'num' }, String(v.bytes)),
			cell);
	}

	function versionTable(cls, last, tbody) {
		return el('table', { class: cls },
			el('thead', null, el('tr', null, ...['version', 'by', 'when', 'bytes', last].map((h) => el('th', null, h)))),
			tbody);
	}

	/*
	 * A version history with a rollback per older version (two clicks). `path` is the versions
	 * URL's base (/v1/policies/NAME or /v1/agents/ID/amendment); `zero` offers version 0 (the empty
	 * amendment).
	 */
	function renderHistory(box, path, versions, zero, what) {
		clear(box);
		const rows = versions.slice();
		if (zero)
			rows.push({ version: 0, actor: 'nothing approved for this agent', time: 0, bytes: 0 });
		if (!rows.length) {
			box.appendChild(el('p', { class: 'empty' }, 'No versions.'));
			return;
		}
		const newest = versions.length ? versions[0].version : 0;
		const tbody = el('tbody');
		for (const v of rows) {
			const cell = el('td', { class: 'actions' });
			const arm = () => {
				clear(cell);
				cell.appendChild(el('span', { class: 'ask' }, 'Make version ' + v.version + '\u2019s text current again?'));
				cell.appendChild(el('button', { type: 'button', class: 'confirm rollback',
					onclick: (ev) => roll(ev.target) }, 'Confirm rollback'));
				cell.appendChild(el('button', { type: 'button', class: 'cancel', onclick: draw }, 'Cancel'));
			};
			const draw = () => {
				clear(cell);
				if (v.version !== newest)
					cell.appendChild(el('button', { type: 'button', class: 'rollback', onclick: arm },
						'Roll back to this'));
				else
					cell.appendChild(el('span', { class: 'hint' }, 'current'));
			};
			const roll = async (button) => {
				button.disabled = true;
				try {
					const r = await api('POST', path + '/rollback', { version: v.version });
					await loadAgent(agentView.id);
					setStatus(what + ' rolled back to v' + r.from + ': now v' + r.version +
						(r.changed ? '' : ' (it had that text already)'));
				} catch (e) {
					failed(e);
					draw();
				}
			};
			draw();
			tbody.appendChild(versionRow(v, cell));
		}
		box.appendChild(versionTable('history', '', tbody));
	}

	/* The boot summary (GET /v1/agents/{id} .boot): firmware, Secure Boot, kernel, command line. */
	const BOOT_STATUS = {
		replays: 'replays to the quoted PCR 0-9',
		mismatch: 'does NOT replay to the quoted PCR 0-9',
		corrupt: 'does not parse',
	};

	function renderBoot(b) {
		const dl = clear($('agent-boot'));
		if (!b || typeof b !== 'object') {
			fact(dl, 'event log', 'none: the agent sends no firmware event log');
			return;
		}
		fact(dl, 'event log', String(b.events === undefined ? '?' : b.events) + ' events, ' +
			(BOOT_STATUS[b.status] || String(b.status)) + ', received ' + absTime(b.received_at));
		if (b.firmware)
			fact(dl, 'firmware', el('span', null, String(b.firmware),
				b.pcr0 ? el('span', { class: 'hint mono' }, ' PCR 0 ' + shortDigest(b.pcr0)) : null));
		fact(dl, 'Secure Boot', String(b.secure_boot || 'unknown'));
		const k = b.kernel && typeof b.kernel === 'object' ? b.kernel : null;
		fact(dl, 'kernel', k
			? el('span', null, el('span', { class: 'mono', title: String(k.digest) }, shortDigest(k.digest)),
				k.file ? ' from "' + k.file + '"' : null, k.name ? ', ' + k.name : null,
				k.allowed === true ? ' ' : null, k.allowed === true ? badge('ok', 'allowed') : null,
				k.allowed === false ? ' ' : null, k.allowed === false ? badge('bad', 'not allowed') : null)
			: 'none measured (no EFI application in PCR 4)');
		fact(dl, 'command line', typeof b.cmdline === 'string'
			? el('span', null, el('span', { class: 'mono' }, b.cmdline), el('span', { class: 'hint' },
				b.cmdline_verified ? ' verified against PCR 9' : ' as reported: not the measured one, or not measured'))
			: 'not reported');
	}

	/*
	 * Retire, purge and reset (each confirmed by a second click), and the agent's history. After
	 * a purge the agent is gone: back to the fleet.
	 */
	function renderLifecycle(a, history) {
		const box = clear($('agent-lifecycle'));
		box.dataset.agent = visible(a.agent_id);
		const enc = encodeURIComponent(a.agent_id);
		const verbs = [];
		if (a.state !== 'retired')
			verbs.push(['retire', 'Retire', 'Refuse its evidence and free its EK; its history stays.',
				'DELETE', '/v1/agents/' + enc]);
		if (!a.reset_at)
			verbs.push(['reset', 'Reset', 'Let its next enrollment bring a new EK and AK.',
				'POST', '/v1/agents/' + enc + '/reset']);
		verbs.push(['purge', 'Purge', 'Delete it with its verdicts, violations and history.',
			'DELETE', '/v1/agents/' + enc + '?purge=1']);
		const buttons = () => {
			clear(box);
			if (a.state === 'retired')
				box.appendChild(el('p', { class: 'retired' }, 'Retired ' + absTime(a.retired_at) + '.'));
			if (a.reset_at)
				box.appendChild(el('p', { class: 'reset' }, 'Reset ' + absTime(a.reset_at) +
					': its next enrollment may bring a new EK and AK.'));
			for (const [verb, label, ask, method, path] of verbs)
				box.appendChild(el('button', { type: 'button', class: verb,
					onclick: () => arm(verb, label, ask, method, path) }, label));
		};
		const arm = (verb, label, ask, method, path) => {
			clear(box);
			box.appendChild(el('span', { class: 'ask' }, ask));
			box.appendChild(el('button', { type: 'button', class: 'confirm ' + verb,
				onclick: async (ev) => {
					ev.target.disabled = true;
					try {
						await api(method, path);
						if (verb === 'purge')
							location.hash = '#/fleet';
						else
							await loadAgent(a.agent_id);
						setStatus('agent ' + a.agent_id + ': ' + verb + ' done');
					} catch (e) {
						failed(e);
						buttons();
					}
				} }, 'Confirm ' + label.toLowerCase()));
			box.appendChild(el('button', { type: 'button', class: 'cancel', onclick: buttons }, 'Cancel'));
		};
		buttons();
		const hbox = clear($('agent-history'));
		const rows = Array.isArray(history) ? history : [];
		hbox.appendChild(el('table', { class: 'history lifecycle' },
			el('thead', null, el('tr', null, el('th', null, 'when'), el('th', null, 'event'),
				el('th', null, 'by'), el('th', null, 'detail'))),
			el('tbody', null, ...rows.map((h) => el('tr', { 'data-event': visible(h.event) },
				el('td', { class: 'when' }, timeCell(h.time)),
				el('td', { class: 'event' }, visible(h.event)),
				el('td', { class: 'actor' }, visible(h.actor)),
				el('td', { class: 'detail' }, visible(h.detail)))))));
	}

	/*
	 * The agent's labels, each removable, and a field setting more (PUT /v1/agents/ID/labels:
	 * KEY=VALUE words; a key it has already gets the new value).
	 */
	function renderLabels(a) {
		const box = clear($('agent-labels'));
		box.dataset.agent = visible(a.agent_id);
		const path = '/v1/agents/' + encodeURIComponent(a.agent_id) + '/labels';
		const change = async (body, what) => {
			try {
				await api('PUT', path, body);
				await loadAgent(a.agent_id);
				setStatus('agent ' + a.agent_id + ': ' + what);
			} catch (e) {
				failed(e);
				renderLabels(a);
			}
		};
		const pairs = labelPairs(a.labels);
		const list = el('ul', { class: 'labels' });
		for (const [k, v] of pairs)
			list.appendChild(el('li', { 'data-key': visible(k) }, el('span', { class: 'label' }, k + '=' + v), ' ',
				el('button', { type: 'button', class: 'remove', title: 'remove this label',
					onclick: (ev) => {
						ev.target.disabled = true;
						change({ remove: [k] }, 'label ' + k + ' removed');
					} }, 'remove')));
		box.appendChild(pairs.length ? list : el('p', { class: 'empty' }, 'No labels.'));
		const input = el('input', { type: 'text', class: 'label-set', placeholder: 'KEY=VALUE ...',
			spellcheck: 'false' });
		const form = el('form', { class: 'label-form' }, input, ' ',
			el('button', { type: 'submit', class: 'label-set' }, 'Set labels'));
		form.addEventListener('submit', (ev) => {
			ev.preventDefault();
			const set = parseLabels(input.value);
			if (!set || !Object.keys(set).length) {
				setStatus('labels: type KEY=VALUE words, separated by spaces', true);
				return;
			}
			change({ set: set }, 'labels set (' + Object.keys(set).map((k) => k + '=' + set[k]).join(' ') + ')');
		});
		box.appendChild(form);
	}

	async function loadAgent(id) {
		if (agentView.id !== id) {
			agentView.limit = VERDICTS_FIRST;
			window.scrollTo(0, 0); /* another agent: from its top, not where the last one was */
		}
		agentView.id = id;
		$('agent-id').textContent = visible(id);
		setStatus('loading agent\u2026');
		const enc = encodeURIComponent(id);
		const [a, vs, viol, hist] = await Promise.all([
			api('GET', '/v1/agents/' + enc),
			api('GET', '/v1/agents/' + enc + '/verdicts?limit=' + agentView.limit),
			api('GET', '/v1/violations?state=open&limit=' + LIST_MAX + '&agent=' + enc),
			api('GET', '/v1/agents/' + enc + '/history'),
		]);
		renderLifecycle(a, hist.history);
		renderLabels(a);
		const dl = clear($('agent-facts'));
		fact(dl, 'state', a.state === 'stale' ? badge('bad', 'stale') : a.state);
		fact(dl, 'last seen', el('span', null, timeCell(a.last_seen), ' (every ' + a.interval + ' s' +
			(a.interval_reported ? ', as the agent reported' : ', the verifier\u2019s default') +
			'; stale after ' + absTime(a.stale_after) + ')'));
		fact(dl, 'last verdict', el('span', null, fleetVerdict(a), ' ', timeCell(a.last_verdict_at)));
		const j = a.judged_by && typeof a.judged_by === 'object' ? a.judged_by : null;
		if (j && j.policy !== undefined)
			fact(dl, 'judged by', el('span', { class: 'judged' },
				versionsText(j.policy, j.policy_version, j.amendment_version),
				a.rejudging === true ? el('span', { class: 'hint' }, '; now ' +
					versionsText(a.policy, a.policy_version, a.amendment_version) +
					': its next round judges its whole boot again') : null));
		fact(dl, 'boot', String(a.boot_number));
		fact(dl, 'open violations', String(a.open_violations));
		fact(dl, 'next IMA entry', String(a.next_entry));
		fact(dl, 'enrolled', absTime(a.created_at));
		fact(dl, 'activated', absTime(a.activated_at));
		fact(dl, 'AK name', el('span', { class: 'mono' }, a.ak_name));
		renderBoot(a.boot);

		const verdicts = Array.isArray(vs.verdicts) ? vs.verdicts : [];
		renderTimeline(verdicts);
		$('timeline-more').hidden = verdicts.length < agentView.limit || agentView.limit >= LIST_MAX;

		const items = Array.isArray(viol.violations) ? viol.violations : [];
		const box = clear($('agent-violations'));
		if (items.length)
			box.appendChild(violationTable(items, false, refreshOpenCount));
		else
			box.appendChild(el('p', { class: 'empty' }, 'None.'));

		const pname = String(a.policy || 'default');
		clear($('policy-name')).appendChild(policyLink(pname));
		let policy = null;
		try {
			policy = await api('GET', '/v1/policies/' + encodeURIComponent(pname) + '/enforced');
		} catch (e) {
			if (!(e instanceof ApiError && e.status === 404))
				throw e;
		}
		renderPolicy($('policy'), pname, policy);

		/* What was approved for this agent alone, and both histories. */
		const [am, amv] = await Promise.all([
			api('GET', '/v1/agents/' + enc + '/amendment'),
			api('GET', '/v1/agents/' + enc + '/amendment/versions'),
		]);
		const abox = clear($('amendment'));
		const apaths = policyPaths(am.amendment);
		/* Boot findings approved for this agent: its amendment's boot section, which only adds. */
		const aboot = am.amendment && am.amendment.boot && typeof am.amendment.boot === 'object'
			? am.amendment.boot : null;
		if (!apaths.length && !aboot)
			abox.appendChild(el('p', { class: 'empty' }, 'Nothing approved for this agent alone.'));
		if (aboot)
			abox.appendChild(el('p', { class: 'amendment-boot' },
				'boot, allowed in addition to the policy\u2019s: ' + bootPolicyText(aboot)));
		if (apaths.length)
			abox.appendChild(el('table', { class: 'policy amendment' },
				el('thead', null, el('tr', null, el('th', null, 'path'), el('th', null, 'digests'))),
				el('tbody', null, ...apaths.map((x) => el('tr', null,
					el('td', { class: 'path mono' }, el('span', { class: 'text' }, x.path),
						x.raw ? el('span', { class: 'hint' }, ' (not UTF-8)') : null),
					el('td', { class: 'digest mono' }, (Array.isArray(x.digests) ? x.digests : [])
						.map(shortDigest).join('  ')))))));
		renderHistory($('amendment-history'), '/v1/agents/' + enc + '/amendment',
			Array.isArray(amv.versions) ? amv.versions : [], (amv.versions || []).length > 0,
			'amendment of ' + id);
		let pv = { versions: [] };
		try {
			pv = await api('GET', '/v1/policies/' + encodeURIComponent(pname) + '/versions');
		} catch (e) {
			if (!(e instanceof ApiError && e.status === 404))
				throw e;
		}
		$('policy-agents').textContent = pv.agents !== undefined
			? '(used by ' + pv.agents + (Number(pv.agents) === 1 ? ' agent)' : ' agents)') : '';
		renderHistory($('policy-history'), '/v1/policies/' + encodeURIComponent(pname),
			Array.isArray(pv.versions) ? pv.versions : [], false, 'policy ' + pname);
		setStatus('agent loaded ' + absTime(Date.now() / 1000));
	}

	/* ---- one policy: as enforced, and its versions ----------------------------------- */

	/* The paths of a stored version and their digests, as one comparable string each. */
	function pathMap(doc) {
		const m = new Map();
		const keylime = doc && typeof doc === 'object' && doc.meta !== undefined && doc.version === undefined;
		for (const x of policyPaths(doc))
			if (!(keylime && x.path === 'boot_aggregate')) /* Keylime's boot_aggregate is no path */
				m.set(x.path, JSON.stringify(x.digests));
		return m;
	}

	function someOf(list) {
		const shown = list.slice(0, 3).join(', ');
		return list.length > 3 ? shown + ', \u2026' : shown;
	}

	/*
	 * What changed from one stored version to the next, in words: paths added, removed or
	 * pinned to other digests (naming a few), excludes added or removed, any other key changed.
	 */
	function policyChanges(before, after) {
		const b = pathMap(after);
		if (!before)
			return 'first version: ' + b.size + (b.size === 1 ? ' path' : ' paths');
		const a = pathMap(before);
		const added = [...b.keys()].filter((k) => !a.has(k)).sort();
		const removed = [...a.keys()].filter((k) => !b.has(k)).sort();
		const changed = [...b.keys()].filter((k) => a.has(k) && a.get(k) !== b.get(k)).sort();
		const parts = [];
		const n = (k, one, many) => k + ' ' + (k === 1 ? one : many);
		if (added.length)
			parts.push('+' + n(added.length, 'path', 'paths') + ' (' + someOf(added) + ')');
		if (removed.length)
			parts.push('\u2212' + n(removed.length, 'path', 'paths') + ' (' + someOf(removed) + ')');
		if (changed.length)
			parts.push(n(changed.length, 'path', 'paths') + ' with other digests (' + someOf(changed) + ')');
		const ex = (d) => (Array.isArray(d && d.excludes) ? d.excludes.map(String) : []);
		const exAdded = ex(after).filter((x) => ex(before).indexOf(x) < 0);
		const exRemoved = ex(before).filter((x) => ex(after).indexOf(x) < 0);
		if (exAdded.length)
			parts.push('+exclude ' + someOf(exAdded));
		if (exRemoved.length)
			parts.push('\u2212exclude ' + someOf(exRemoved));
		const keys = new Set([...Object.keys(before || {}), ...Object.keys(after || {})]);
		for (const k of [...keys].sort()) {
			if (k === 'digests' || k === 'digests_hex' || k === 'excludes')
				continue;
			if (JSON.stringify(before[k]) !== JSON.stringify(after[k]))
				parts.push(k + ' changed');
		}
		return parts.length ? parts.join('; ') : 'no change (the same as the version before)';
	}

	const policyView = { name: null };

	async function loadPolicyView(name) {
		policyView.name = name;
		const enc = encodeURIComponent(name);
		clear($('pv-name')).appendChild(document.createTextNode(visible(name)));
		setStatus('loading policy\u2026');
		let env = null;
		let pv = { versions: [] };
		try {
			[env, pv] = await Promise.all([api('GET', '/v1/policies/' + enc + '/enforced'),
				api('GET', '/v1/policies/' + enc + '/versions')]);
		} catch (e) {
			if (!(e instanceof ApiError && e.status === 404))
				throw e;
		}
		$('pv-agents').textContent = pv.agents !== undefined
			? '(used by ' + pv.agents + (Number(pv.agents) === 1 ? ' agent)' : ' agents)') : '';
		renderPolicy($('pv-policy'), name, env);
		const versions = Array.isArray(pv.versions) ? pv.versions : [];
		const box = clear($('pv-versions'));
		if (!versions.length) {
			box.appendChild(el('p', { class: 'empty' }, 'No versions.'));
			setStatus('policy loaded ' + absTime(Date.now() / 1000));
			return;
		}
		/* Each stored text once, fetched when a row needs it (the newest few at once). */
		const texts = new Map();
		const text = (v) => {
			if (v <= 0)
				return Promise.resolve(null);
			if (!texts.has(v))
				texts.set(v, api('GET', '/v1/policies/' + enc + '/versions/' + v));
			return texts.get(v);
		};
		const tbody = el('tbody');
		const show = async (v, cell) => {
			clear(cell).appendChild(el('span', { class: 'hint' }, 'comparing\u2026'));
			try {
				const [before, after] = await Promise.all([text(v.version - 1), text(v.version)]);
				clear(cell).appendChild(document.createTextNode(visible(policyChanges(before, after))));
			} catch (e) {
				clear(cell);
				failed(e);
			}
		};
		const auto = [];
		versions.forEach((v, i) => {
			const cell = el('td', { class: 'changes' });
			if (i < CHANGES_AUTO)
				auto.push(show(v, cell));
			else
				cell.appendChild(el('button', { type: 'button', class: 'changes',
					onclick: () => show(v, cell) }, 'what changed'));
			tbody.appendChild(versionRow(v, cell));
		});
		box.appendChild(versionTable('history versions', 'what changed', tbody));
		await Promise.all(auto);
		setStatus('policy loaded ' + absTime(Date.now() / 1000));
	}

	/* ---- the named policies --------------------------------------------------------- */

	/*
	 * GET /v1/policies: each policy's newest version, who wrote it and when, how many agents it
	 * judges (a link to the fleet filtered by it). A policy no agent uses can be deleted with its
	 * history (DELETE /v1/policies/NAME), confirmed by a second click; the verifier refuses one
	 * a registration names (409), and the page shows its answer.
	 */
	async function loadPolicies() {
		setStatus('loading policies\u2026');
		const r = await api('GET', '/v1/policies');
		const list = Array.isArray(r.policies) ? r.policies : [];
		const box = clear($('pol-list'));
		const tbody = el('tbody');
		for (const p of list) {
			const name = String(p.name);
			const n = Number(p.agents) || 0;
			const cell = el('td', { class: 'actions' });
			const buttons = () => {
				clear(cell);
				if (name === 'default')
					cell.appendChild(el('span', { class: 'hint' }, 'judges every agent that names none'));
				else if (n > 0)
					cell.appendChild(el('span', { class: 'hint' }, 'in use'));
				else
					cell.appendChild(el('button', { type: 'button', class: 'delete', onclick: () => {
						clear(cell);
						cell.appendChild(el('span', { class: 'ask' }, 'Delete ' + name + ' and its history?'));
						cell.appendChild(el('button', { type: 'button', class: 'confirm delete',
							onclick: async (ev) => {
								ev.target.disabled = true;
								try {
									await api('DELETE', '/v1/policies/' + encodeURIComponent(name));
									await loadPolicies();
									setStatus('policy ' + name + ' deleted');
								} catch (e) {
									failed(e);
									buttons();
								}
							} }, 'Confirm delete'));
						cell.appendChild(el('button', { type: 'button', class: 'cancel', onclick: buttons }, 'Cancel'));
					} }, 'Delete'));
			};
			buttons();
			tbody.appendChild(el('tr', { 'data-policy': visible(name) },
				el('td', { class: 'name' }, policyLink(name)),
				el('td', { class: 'num version' }, 'v' + p.version),
				el('td', { class: 'actor' }, p.actor),
				el('td', { class: 'when' }, timeCell(p.time)),
				el('td', { class: 'num agents' }, n > 0 ? el('a', { href: '#/fleet', title: 'the fleet, filtered by it',
					onclick: () => { fleet.policyWanted = visible(name); fleet.page = 0; } }, String(n)) : '0'),
				cell));
		}
		box.appendChild(list.length ? el('table', { class: 'policies' },
			el('thead', null, el('tr', null, ...['policy', 'newest', 'by', 'when', 'agents', '']
				.map((h) => el('th', h === 'agents' || h === 'newest' ? { class: 'num' } : null, h)))), tbody)
			: el('p', { class: 'empty' }, 'No policies.'));
		setStatus(list.length + ' policies, loaded ' + absTime(Date.now() / 1000));
	}

	/* ---- registrations (admission) --------------------------------------------------- */

	/* Fills a policy <select> with the named policies, keeping its first option (the default). */
	async function policyOptions(select) {
		const r = await api('GET', '/v1/policies');
		while (select.options.length > 1)
			select.remove(1);
		for (const p of Array.isArray(r.policies) ? r.policies : [])
			if (p && p.name !== 'default')
				select.appendChild(el('option', { value: visible(p.name) }, p.name));
	}

	/*
	 * Every registered id with its EK digest, policy and labels, whether it has enrolled (it is
	 * in the fleet), and who registered it; each can be unregistered (confirmed by a second
	 * click; an enrolled agent stays). The form above registers one (POST /v1/registrations).
	 */
	async function loadRegistrations() {
		setStatus('loading registrations\u2026');
		const [r, ag] = await Promise.all([api('GET', '/v1/registrations'), api('GET', '/v1/agents'),
			policyOptions($('reg-policy'))]);
		const enrolled = new Set((Array.isArray(ag.agents) ? ag.agents : []).map((a) => String(a.agent_id)));
		const regs = Array.isArray(r.registrations) ? r.registrations : [];
		const box = clear($('reg-list'));
		if (!regs.length) {
			box.appendChild(el('p', { class: 'empty' }, 'No agent is registered.'));
			setStatus('0 registrations, loaded ' + absTime(Date.now() / 1000));
			return;
		}
		const tbody = el('tbody');
		for (const g of regs) {
			const cell = el('td', { class: 'actions' });
			const buttons = () => {
				clear(cell).appendChild(el('button', { type: 'button', class: 'unregister', onclick: () => {
					clear(cell);
					cell.appendChild(el('span', { class: 'ask' }, 'Delete this registration?'));
					cell.appendChild(el('button', { type: 'button', class: 'confirm unregister',
						onclick: async (ev) => {
							ev.target.disabled = true;
							try {
								await api('DELETE', '/v1/registrations/' + encodeURIComponent(g.agent_id));
								await loadRegistrations();
								setStatus('registration of ' + g.agent_id + ' deleted');
							} catch (e) {
								failed(e);
								buttons();
							}
						} }, 'Confirm unregister'));
					cell.appendChild(el('button', { type: 'button', class: 'cancel', onclick: buttons }, 'Cancel'));
				} }, 'Unregister'));
			};
			buttons();
			const isIn = enrolled.has(String(g.agent_id));
			tbody.appendChild(el('tr', { 'data-agent': visible(g.agent_id) },
				el('td', { class: 'agent' }, isIn ? agentLink(g.agent_id) : el('span', { class: 'mono' }, g.agent_id)),
				el('td', { class: 'ek mono', title: visible(g.ek_sha256) },
					(g.ek === 'cert' ? 'certificate ' : 'public ') + shortDigest('sha256:' + g.ek_sha256)),
				el('td', { class: 'policy' }, policyLink(g.policy || 'default')),
				el('td', { class: 'labels' }, labelChips(g.labels, null)),
				el('td', { class: 'enrolled' }, isIn ? 'enrolled' : 'not yet'),
				el('td', { class: 'actor' }, g.actor),
				el('td', { class: 'when' }, timeCell(g.created_at)),
				cell));
		}
		box.appendChild(el('table', { class: 'registrations' },
			el('thead', null, el('tr', null, ...['agent', 'EK (SHA-256)', 'policy', 'labels', 'enrolled',
				'by', 'when', ''].map((h) => el('th', null, h)))), tbody));
		setStatus(regs.length + ' registrations, loaded ' + absTime(Date.now() / 1000));
	}

	/*
	 * An EK certificate file as the API takes it: DER, base64. A PEM file's base64 is taken from
	 * between its first BEGIN CERTIFICATE and END CERTIFICATE lines; anything else is sent as
	 * DER, and the verifier parses it (and says what it refuses).
	 */
	async function certBase64(file) {
		const bytes = new Uint8Array(await file.arrayBuffer());
		const head = String.fromCharCode(...bytes.slice(0, 64));
		if (head.indexOf('-----BEGIN') >= 0) {
			const pem = new TextDecoder().decode(bytes);
			const m = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
			if (!m)
				throw new Error('the PEM file holds no CERTIFICATE block');
			return m[1].replace(/\s+/g, '');
		}
		let bin = '';
		for (let i = 0; i < bytes.length; i += 0x8000)
			bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
		return btoa(bin);
	}

	async function addRegistration() {
		const labels = parseLabels($('reg-labels').value);
		if (!labels) {
			setStatus('labels: type KEY=VALUE words, separated by spaces', true);
			return;
		}
		const digest = $('reg-ek').value.trim().toLowerCase();
		const file = $('reg-ek-cert').files[0];
		if (!digest === !file) {
			setStatus('registration: give the EK SHA-256 or the EK certificate (one of them)', true);
			return;
		}
		const reg = { agent_id: $('reg-id').value.trim() };
		if (file)
			reg.ek_cert = await certBase64(file);
		else
			reg.ek_sha256 = digest;
		if ($('reg-policy').value)
			reg.policy = $('reg-policy').value;
		if (Object.keys(labels).length)
			reg.labels = labels;
		$('reg-add').disabled = true;
		try {
			await api('POST', '/v1/registrations', { registrations: [reg] });
			for (const f of ['reg-id', 'reg-ek', 'reg-ek-cert', 'reg-labels'])
				$(f).value = '';
			await loadRegistrations();
			setStatus('agent ' + reg.agent_id + ' registered');
		} catch (e) {
			failed(e);
		} finally {
			$('reg-add').disabled = false;
		}
	}

	/* ---- navigation ----------------------------------------------------------------- */

	const VIEWS = ['login', 'fleet', 'agent', 'policyview', 'policies', 'registrations', 'violations'];

	function show(view) {
		for (const v of VIEWS)
			$(v).hidden = v !== view;
		$('nav-fleet').classList.toggle('current', view === 'fleet');
		$('nav-violations').classList.toggle('current', view === 'violations');
		$('nav-registrations').classList.toggle('current', view === 'registrations');
		$('nav-policies').classList.toggle('current', view === 'policies');
	}

	function showLogin(message) {
		show('login');
		$('login-error').textContent = message ? visible(message) : '';
		$('token').focus();
	}

	function route() {
		if (!token()) {
			showLogin('');
			return;
		}
		const h = location.hash || '#/fleet';
		let p;
		/* The rest of the hash after prefix, decoded ('' if it does not decode). */
		const arg = (prefix) => {
			try {
				return decodeURIComponent(h.slice(prefix.length));
			} catch (e) {
				return '';
			}
		};
		if (h.startsWith('#/agent/')) {
			show('agent');
			p = loadAgent(arg('#/agent/'));
		} else if (h.startsWith('#/policy/')) {
			show('policyview');
			p = loadPolicyView(arg('#/policy/'));
		} else if (h === '#/policies') {
			show('policies');
			p = loadPolicies();
		} else if (h === '#/registrations') {
			show('registrations');
			p = loadRegistrations();
		} else if (h === '#/violations') {
			show('violations');
			p = loadQueue();
		} else {
			show('fleet');
			p = loadFleet();
		}
		p.catch(failed);
	}

	function init() {
		$('login-form').addEventListener('submit', (ev) => {
			ev.preventDefault();
			const t = $('token').value.trim();
			if (!t)
				return;
			sessionStorage.setItem(TOKEN_KEY, t);
			$('token').value = '';
			route();
		});
		$('logout').addEventListener('click', () => {
			sessionStorage.removeItem(TOKEN_KEY);
			showLogin('Token forgotten.');
		});
		$('refresh').addEventListener('click', route);
		/* Times are the browser's local time: say which. */
		const off = -new Date().getTimezoneOffset();
		$('tz').textContent = 'times in ' + (Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time') +
			' (UTC' + (off < 0 ? '\u2212' : '+') + pad2(Math.floor(Math.abs(off) / 60)) + ':' +
			pad2(Math.abs(off) % 60) + ')';
		/* The fleet reloads itself every AUTO_REFRESH s when asked (nothing else: a view with a
		 * confirmation armed must not be redrawn under the operator's pointer). */
		setInterval(() => {
			if ($('auto-refresh').checked && token() && !$('fleet').hidden)
				loadFleet().catch(failed);
		}, AUTO_REFRESH * 1000);
		$('fleet-filter').addEventListener('input', () => { fleet.page = 0; renderFleet(); });
		$('fleet-show').addEventListener('change', () => { fleet.page = 0; renderFleet(); });
		$('fleet-label').addEventListener('input', () => { fleet.page = 0; renderFleet(); renderAssign(); });
		$('fleet-policy').addEventListener('change', () => { fleet.page = 0; renderFleet(); });
		$('reg-form').addEventListener('submit', (ev) => {
			ev.preventDefault();
			addRegistration().catch(failed);
		});
		$('viol-filter').addEventListener('input', () => { queue.page = 0; renderQueue(); });
		$('viol-state').addEventListener('change', () => { queue.page = 0; loadQueue().catch(failed); });
		$('timeline-more').addEventListener('click', () => {
			agentView.limit = Math.min(LIST_MAX, agentView.limit * 4);
			loadAgent(agentView.id).catch(failed);
		});
		window.addEventListener('hashchange', route);
		route();
	}

	document.addEventListener('DOMContentLoaded', init);
})();
