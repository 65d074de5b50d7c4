#!/usr/bin/env python3
"""Build the record-plan (DWP v6/v7) conformance fixtures from scratch.

    python3 scripts/record_fixtures.py conformance-fixtures

Deletes every `record-*` folder under the given directory and writes them again, byte for
byte the same on every run: timestamps come from a fixed clock, never the wall clock.

Each fixture is a record plan (manifest.json, contract.json, contracts/ chain, journal.ndjson,
journal archives, gates/ logs, state.json, plan markdown) written the way the public pack's
ledger writes one, plus an `expected.json` naming the exact codes `dwp validate` and
`dwp verify` must report (conformance-fixtures/README.md). The bytes follow the pack's
conventions:

- contract id: sha256 of `json.dumps(body, sort_keys=True, separators=(',', ':'))`, body = the
  contract without `contract_id`;
- contract files, manifest and state.json: `json.dumps(doc, sort_keys=True, indent=2) + "\\n"`;
- journal lines: `json.dumps(event, sort_keys=True, separators=(',', ':')) + "\\n"`;
- gate logs: `$ CMD\\n\\n--- stdout ---\\nOUT\\n--- stderr ---\\nERR\\n--- exit N ---\\n` under
  `gates/<T-id>/<seq:03d>-<slug>.log`, cited relative to the plan folder;
- approval `plan_digest`: sha256 of the plan's top-level `*.md` files, sorted by name, bytes
  concatenated.

`state.json` is this script's own projection of contract + journal (`project` below), so the
fixtures are an expectation independent of dwp's code. A tampered fixture is a clean plan with
exactly one thing changed; its expected codes list everything that one change causes.

Python 3 standard library only.
"""

import copy
import datetime
import hashlib
import json
import os
import re
import shutil
import sys

BASE = 'https://deepworkplan.com/schema/'
CONTRACT_URL = {'v6': BASE + 'plan-contract/v6.json', 'v7': BASE + 'plan-contract/v7.json'}
MANIFEST_URL = {'v6': BASE + 'plan-manifest/v6.json', 'v7': BASE + 'plan-manifest/v7.json'}
JOURNAL_URL = {'v6': BASE + 'journal-event/v6.json', 'v7': BASE + 'journal-event/v7.json'}
SNAPSHOT_URL = BASE + 'plan-snapshot/v6.json'
LEDGER = {'v6': 'dwp-ledger/6.0', 'v7': 'dwp-ledger/7.0'}
REPO = '/srv/repos/shop'
AGENT = {'kind': 'agent', 'identity': 'claude-code'}
LEAD = 'maria.lopez'
ARCHIVE_NAME = re.compile(r'^journal-archive-(\d{6})-(\d{6})\.ndjson$')


# ------------------------------------------------------------------ bytes

def compact(doc):
    return json.dumps(doc, sort_keys=True, separators=(',', ':'))


def pretty(doc):
    return json.dumps(doc, sort_keys=True, indent=2) + '\n'


def sha256(data):
    if isinstance(data, str):
        data = data.encode('utf-8')
    return hashlib.sha256(data).hexdigest()


def contract_id(doc):
    return sha256(compact({k: v for k, v in doc.items() if k != 'contract_id'}))


def stamped(doc):
    body = {k: v for k, v in doc.items() if k != 'contract_id'}
    return dict(body, contract_id=contract_id(body))


def generation(contract):
    for gen, url in CONTRACT_URL.items():
        if contract.get('schema') == url:
            return gen
    return 'v7'  # a newer generation is written with the newest URLs we know


def markdown_digest(markdown):
    """sha256 over the top-level *.md files, sorted by name, bytes concatenated."""
    return sha256(b''.join(markdown[name].encode('utf-8') for name in sorted(markdown)))


def fake_revision(*parts):
    return hashlib.sha1(':'.join(parts).encode('utf-8')).hexdigest()


# ------------------------------------------------------------- projection

def project(contract, events, archive_names):
    """The snapshot a ledger projects from the live contract and every event (archived first).

    Written from the projection rules (positions, string-max updated_at, latest samples per
    limit, the latest new_authority question, criterion windows from the latest task_start,
    amendment invalidation once an approval cites the amended contract).
    """
    counted = [e for e in events if e.get('type') != 'view_render']
    positions = {}
    for event in counted:
        if event['seq'] > positions.get(event['type'], {}).get('seq', 0):
            positions[event['type']] = {'seq': event['seq']}
    samples = {}
    for event in events:
        if event.get('type') == 'resource_sample':
            samples[event.get('limit_id')] = {
                'value': event.get('value'), 'seq': event.get('seq'), 'trust': event.get('trust')}
    questions = [e.get('question') for e in events
                 if e.get('type') == 'intervention' and e.get('category') == 'new_authority']
    # A task's state reads only its own events (and the amendments' floor): grouping them once
    # keeps the projection linear in the journal, which a 10,000-event plan needs.
    floor = invalidated_before(events)
    by_task = {}
    for event in events:
        by_task.setdefault(event.get('task'), []).append(event)
    state = {
        'schema': SNAPSHOT_URL,
        'plan': contract['plan'],
        'contract_id': contract.get('contract_id') or contract_id(contract),
        'contract_revision': contract.get('revision', 1),
        'generated_by': LEDGER[generation(contract)],
        'updated_at': max([e['ts'] for e in counted] or ['']),
        'positions': positions,
        'resources': {'limits': contract['resource_envelope']['limits'],
                      'latest_samples': samples},
        'checkpoint': questions[-1] if questions else None,
        'blocker': None,
        'tasks': [task_state(contract, by_task.get(task['id'], []), task, floor)
                  for task in contract['tasks']],
    }
    archives = []
    for name in sorted(archive_names):
        match = ARCHIVE_NAME.match(name)
        archives.append({'file': name, 'first_seq': int(match.group(1)),
                         'last_seq': int(match.group(2))})
    if archives:
        state['archives'] = archives
    return state


def latest_start(events, task_id):
    seqs = [e['seq'] for e in events if e.get('type') == 'task_start' and e.get('task') == task_id]
    return max(seqs) if seqs else None


def invalidated_before(events):
    approved = {e.get('contract_id') for e in events if e.get('type') == 'approval'}
    tag = re.compile(r'amendment to revision \d+ contract ([0-9a-f]{64})')
    floor = {}
    for event in events:
        if event.get('type') != 'amendment':
            continue
        cited = tag.search(event.get('note') or '')
        if cited and cited.group(1) not in approved:
            continue  # an amendment nobody approved invalidates nothing
        for criterion in event.get('evidence_invalidated') or []:
            floor[criterion] = max(floor.get(criterion, 0), event['seq'])
    return floor


def criterion_states(contract, events, task, floor=None):
    """`events`: the journal, or only the task's own events with the journal's `floor`."""
    start = latest_start(events, task['id'])
    accepts = {c['id']: c['accepted_evidence'] for c in contract['acceptance']['criteria']}
    if floor is None:
        floor = invalidated_before(events)
    states = []
    for intent in task['gate_intent']:
        criterion = intent['criterion']
        best, stale = None, []
        for event in events:
            if event.get('type') != 'gate_run' or event.get('task') != task['id'] \
                    or event.get('criterion') != criterion:
                continue
            if start is None or event['seq'] < start or event['seq'] < floor.get(criterion, 0):
                stale.append(event['seq'])
            elif event.get('trust') in accepts.get(criterion, []) and event.get('exit_code') == 0:
                if best is None or event['seq'] > best['via_seq']:
                    best = {'criterion': criterion, 'satisfied': True, 'via_seq': event['seq'],
                            'trust': event['trust'], 'evidence_path': event.get('evidence_path')}
        states.append(best or {'criterion': criterion, 'satisfied': False,
                               'started_seq': start, 'stale_seqs': stale})
    return states


def task_state(contract, events, task, floor=None):
    start = latest_start(events, task['id'])
    criteria = criterion_states(contract, events, task, floor)
    if start is None:
        status = 'pending'
    elif all(c['satisfied'] for c in criteria):
        status = 'completed'  # an empty gate_intent completes as soon as the task starts
    else:
        status = 'in_progress'
    return {'id': task['id'], 'title': task.get('title'), 'status': status,
            'started_seq': start, 'criteria': criteria}


# ------------------------------------------------------------------ plans

class Symlink:
    def __init__(self, target):
        self.target = target


class Plan:
    """One record plan written event by event, the way the ledger's verbs write it."""

    def __init__(self, contract, markdown, clock='2026-05-04T09:00:00Z'):
        self.chain = [stamped(contract)]
        self.name = contract['plan']
        self.gen = generation(contract)
        self.markdown = dict(markdown)
        self.events = []
        self.archives = []
        self.extra = {}
        self.chain_started = False
        self.clock = datetime.datetime.strptime(clock, '%Y-%m-%dT%H:%M:%SZ')

    @property
    def live(self):
        return self.chain[-1]

    def ts(self):
        self.clock += datetime.timedelta(minutes=4, seconds=10)
        return self.clock.strftime('%Y-%m-%dT%H:%M:%SZ')

    def next_seq(self):
        return (self.events[-1]['seq'] if self.events else 0) + 1

    def append(self, etype, payload, actor, trust=None, evidence_path=None, note=None,
               cites=None):
        event = dict(payload)
        event.update({'schema': JOURNAL_URL[self.gen], 'type': etype, 'seq': self.next_seq(),
                      'ts': self.ts(), 'plan': self.name,
                      'contract_id': cites or self.live['contract_id'], 'actor': actor})
        if note is not None:
            event['note'] = note
        if trust is not None:
            event['trust'] = trust
        if evidence_path is not None:
            event['evidence_path'] = evidence_path
        self.events.append(event)
        return event

    def helper(self):
        return {'kind': 'helper', 'identity': LEDGER[self.gen]}

    def approve(self, note=None, cites=None, authority=LEAD):
        mechanism = self.live['authorization']['mechanism']
        return self.append('approval', {'authority': authority, 'mechanism': mechanism,
                                        'plan_digest': markdown_digest(self.markdown)},
                           {'kind': 'human', 'identity': authority}, note=note, cites=cites)

    def start(self, task, dirty=''):
        revision = fake_revision(self.name, task, str(self.next_seq()))
        return self.append('task_start', {'task': task, 'fingerprint': {
            'revision': revision, 'dirty': dirty}}, AGENT)

    def check_of(self, task, criterion):
        for candidate in self.live['tasks']:
            if candidate['id'] == task:
                for intent in candidate['gate_intent']:
                    if intent['criterion'] == criterion:
                        return intent['check']
        raise KeyError((task, criterion))

    def gate(self, task, criterion, exit_code=0, out='', err='', log_task=None):
        command = self.check_of(task, criterion)
        slug = re.sub(r'[^A-Za-z0-9._-]+', '-', command)[:40].strip('-') or 'gate'
        log = 'gates/%s/%03d-%s.log' % (log_task or task, self.next_seq(), slug)
        self.extra[log] = '$ %s\n\n--- stdout ---\n%s\n--- stderr ---\n%s\n--- exit %d ---\n' % (
            command, out, err, exit_code)
        return self.append('gate_run', {'command': command, 'cwd': REPO, 'timeout_seconds': 600,
                                        'exit_code': exit_code, 'task': task,
                                        'criterion': criterion},
                           self.helper(), trust='observed', evidence_path=log)

    def signoff(self, task, criterion, evidence_path, text, authority=LEAD):
        self.extra[evidence_path] = text
        return self.append('gate_run', {'command': 'signoff (asserted, not executed)', 'cwd': '.',
                                        'timeout_seconds': 1, 'exit_code': 0, 'task': task,
                                        'criterion': criterion},
                           {'kind': 'human', 'identity': authority}, trust='asserted',
                           evidence_path=evidence_path,
                           note='human sign-off: asserted, never executed; evidence sha256:%s'
                           % sha256(text)[:16])

    def observe(self, statement):
        return self.append('observation', {'statement': statement}, AGENT, trust='asserted')

    def refuse(self, subject, stage, reason):
        return self.append('refusal', {'subject': subject, 'stage': stage, 'reason': reason},
                           self.helper())

    def intervene(self, category, description, question):
        return self.append('intervention', {'category': category, 'description': description,
                                            'question': question}, AGENT)

    def sample(self, limit_id, value, unit, source, meter=None):
        if meter is None:
            return self.append('resource_sample', {'source': source, 'limit_id': limit_id,
                                                   'value': value, 'unit': unit},
                               AGENT, trust='asserted')
        path, text = meter
        self.extra[path] = text
        return self.append('resource_sample', {'source': source, 'limit_id': limit_id,
                                               'value': value, 'unit': unit},
                           {'kind': 'host_adapter', 'identity': 'claude-adapter'},
                           trust='observed', evidence_path=path)

    def delegate(self, task, delegation_id, state, **fields):
        payload = dict(fields, task=task, delegation_id=delegation_id, state=state,
                       transport='headless', via='agentkit')
        return self.append('delegation', payload, AGENT)

    def amend(self, draft, invalidated, affected, reason, readme_line=None, parent=None,
              approved=True):
        """The amend order: stage rN, amendment (citing the live id), approval of rN, switch.

        With approved=False the sequence stops after the amendment event, as an interrupted
        amend leaves it: rN stays a hidden pending file and the live contract is unchanged.
        """
        self.chain_started = True
        old = self.live
        body = {k: v for k, v in draft.items() if k != 'contract_id'}
        body['revision'] = old['revision'] + 1
        body['parent_contract_id'] = parent or old['contract_id']
        new = stamped(body)
        note_path = 'notes/amend-r%d.md' % new['revision']
        self.extra[note_path] = reason + '\n'
        marker = 'human authority marker: note %s sha256:%s' % (
            note_path, sha256(self.extra[note_path])[:16])
        self.append('amendment', {
            'original_criterion': observable_checks(old, invalidated),
            'revised_criterion': observable_checks(new, invalidated),
            'observed_finding': reason, 'reason': reason, 'disposition': 'revised',
            'authority': LEAD, 'affected_tasks': affected,
            'evidence_invalidated': invalidated, 'evidence_preserved': []},
            {'kind': 'human', 'identity': LEAD},
            note='amendment to revision %d contract %s | %s' % (
                new['revision'], new['contract_id'], marker))
        if not approved:
            self.extra['contracts/.contract.r%d.json.pending' % new['revision']] = pretty(new)
            return
        if readme_line:
            self.markdown['README.md'] += readme_line
        self.approve(note='approves revision %d (%s) | %s' % (new['revision'], reason, marker),
                     cites=new['contract_id'])
        self.chain.append(new)

    def roll(self):
        live = [e for e in self.events if e['seq'] > self.archive_top()]
        name = 'journal-archive-%06d-%06d.ndjson' % (live[0]['seq'], live[-1]['seq'])
        self.archives.append((name, live))

    def archive_top(self):
        return self.archives[-1][1][-1]['seq'] if self.archives else 0

    def snapshot(self, upto=None):
        events = self.events if upto is None else [e for e in self.events if e['seq'] <= upto]
        return pretty(project(self.live, events, [name for name, _ in self.archives]))

    def files(self, state=True):
        """Every file of the plan folder: relative path -> text (or Symlink)."""
        first = self.chain[0]
        out = {'manifest.json': pretty({'schema': MANIFEST_URL[self.gen], 'plan': self.name,
                                        'contract': {'id': first['contract_id'],
                                                     'path': 'contract.json'}}),
               'contract.json': pretty(first)}
        if self.chain_started:
            for doc in self.chain:
                out['contracts/contract.r%d.json' % doc['revision']] = pretty(doc)
        for name, events in self.archives:
            out[name] = ''.join(compact(e) + '\n' for e in events)
        out['journal.ndjson'] = ''.join(compact(e) + '\n' for e in self.events
                                        if e['seq'] > self.archive_top())
        if state:
            out['state.json'] = self.snapshot()
        out.update(self.markdown)
        out.update(self.extra)
        return out


# -------------------------------------------------------------- contracts

def common_contract(gen, plan, title, created):
    return {
        'schema': CONTRACT_URL[gen],
        'spec_version': '6.0.0' if gen == 'v6' else '7.0.0',
        'plan': plan,
        'revision': 1,
        'created_at': created,
        'title': title,
    }


def billing_contract(gen='v6'):
    doc = common_contract(gen, 'PLAN_014_billing_retry_backoff',
                          'Retry failed card charges with backoff', '2026-05-04T08:30:00Z')
    doc.update({
        'outcome': {
            'statement': 'Failed card charges are retried on a backoff schedule and a retry '
                         'never charges a customer twice.',
            'success_definition': 'The retry schedule and idempotency tests pass and the '
                                  'on-call runbook describes the retry budget.',
            'out_of_scope': ['dunning emails', 'changing the payment provider'],
        },
        'acceptance': {'criteria': [
            {'id': 'AC-backoff-schedule',
             'statement': 'A failed charge is retried after 1h, 6h and 24h; then the invoice '
                          'is marked past_due.',
             'observable_check': 'the retry schedule test passes',
             'accepted_evidence': ['observed'],
             'control': {'kind': 'regression',
                         'rationale': 'the old code retried every 5 minutes; the test must '
                                      'fail on it'}},
            {'id': 'AC-idempotent-charge',
             'statement': 'A retried charge reuses the idempotency key of the first attempt.',
             'observable_check': 'the idempotency test passes against stripe-mock',
             'accepted_evidence': ['observed']},
            {'id': 'AC-runbook-reviewed',
             'statement': 'The on-call runbook explains the retry budget and how to stop '
                          'retries for one customer.',
             'observable_check': 'the runbook names the retry budget',
             'accepted_evidence': ['observed', 'asserted'],
             'control': {'kind': 'exempt', 'rationale': 'prose for people on call'}},
        ]},
        'invariants': [
            {'id': 'INV-no-double-charge',
             'statement': 'No customer is charged twice for one invoice.'},
            {'id': 'INV-webhooks-ack',
             'statement': 'Payment webhooks keep answering 2xx within 5 seconds.'},
        ],
        'scope': {
            'allowed_paths': ['services/billing/', 'tests/billing/', 'docs/runbooks/'],
            'allowed_command_classes': ['pytest', 'grep'],
            'forbidden_operations': ['push to main', 'deploy to production',
                                     'change live payment provider settings'],
        },
        'authorization': {
            'mechanism': 'plan_authorship',
            'authority': 'maria.lopez (billing team lead)',
            'timestamp': '2026-05-04T08:45:00Z',
            'boundaries': 'this plan only; no deploys and no customer-facing email changes',
            'consent_checkpoints': ['Ask before touching the charges table schema'],
        },
        'permissions': {
            'granted': ['gate_command_exec', 'fs_write_repo_scope', 'git_operations',
                        'host_adapter_metering'],
            'not_granted': ['network_access', 'agent_delegation', 'model_routing'],
        },
        'dependencies': [
            {'name': 'stripe-mock', 'kind': 'pinned_input',
             'detail': 'stripe-mock 0.188.0 serves the test suite'},
            {'name': 'STRIPE_TEST_KEY', 'kind': 'credential',
             'detail': 'test-mode key from the team vault (name only)'},
        ],
        'resource_envelope': {'limits': [
            {'id': 'wall_clock_h', 'limit': 6, 'unit': 'hours', 'enforcement': 'advisory'},
            {'id': 'spend_usd', 'limit': 40, 'unit': 'USD', 'enforcement': 'enforced',
             'metering_source': 'claude-adapter: usage.total_cost_usd', 'reserve': 5},
        ]},
        'scheduling': {'max_retries_per_gate': 2},
        'tasks': [
            {'id': 'T-backoff-schedule',
             'title': 'Replace the fixed retry interval with a backoff schedule',
             'prerequisites': [],
             'touched_surface': ['services/billing/retry.py',
                                 'tests/billing/test_retry_schedule.py'],
             'gate_intent': [{'criterion': 'AC-backoff-schedule',
                              'check': 'pytest -q tests/billing/test_retry_schedule.py'}]},
            {'id': 'T-idempotency-keys',
             'title': 'Carry the idempotency key across retries',
             'prerequisites': ['T-backoff-schedule'],
             'touched_surface': ['services/billing/charges.py',
                                 'tests/billing/test_idempotency.py'],
             'gate_intent': [{'criterion': 'AC-idempotent-charge',
                              'check': 'pytest -q tests/billing/test_idempotency.py'}]},
            {'id': 'T-runbook',
             'title': 'Update the on-call runbook',
             'prerequisites': ['T-idempotency-keys'],
             'touched_surface': ['docs/runbooks/billing-retries.md'],
             'gate_intent': [{'criterion': 'AC-runbook-reviewed',
                              'check': "grep -q 'retry budget' docs/runbooks/billing-retries.md"}]},
        ],
    })
    return doc


def docs_contract():
    doc = common_contract('v7', 'PLAN_021_docs_site_migration',
                          'Move the product docs from the wiki to the docs site',
                          '2026-06-01T07:50:00Z')
    doc.update({
        'outcome': {
            'statement': 'The product documentation lives in docs/site/ and every old wiki URL '
                         'redirects to its new page.',
            'success_definition': 'The site builds strictly and the redirect check finds no '
                                  'wiki URL without a target.',
            'out_of_scope': ['rewriting page content', 'a new visual theme'],
        },
        'acceptance': {'criteria': [
            {'id': 'AC-inventory-complete',
             'statement': 'Every wiki page is listed in docs/migration/inventory.csv with its '
                          'new path.',
             'observable_check': 'the inventory check reports no unmapped page',
             'accepted_evidence': ['observed']},
            {'id': 'AC-guides-build',
             'statement': 'The converted guides build without warnings.',
             'observable_check': 'a strict build of the guides exits 0',
             'accepted_evidence': ['observed']},
            {'id': 'AC-reference-build',
             'statement': 'The API reference pages convert with their code samples intact.',
             'observable_check': 'the reference check finds every code sample',
             'accepted_evidence': ['observed']},
            {'id': 'AC-redirects-resolve',
             'statement': 'Every old wiki URL redirects to an existing page.',
             'observable_check': 'the redirect check resolves every inventory row',
             'accepted_evidence': ['observed']},
        ]},
        'invariants': [
            {'id': 'INV-wiki-read-only',
             'statement': 'The wiki export is read, never edited.'},
        ],
        'scope': {
            'allowed_paths': ['docs/', 'scripts/docs/'],
            'allowed_command_classes': ['python3', 'mkdocs'],
            'forbidden_operations': ['publish the site', 'delete wiki pages'],
        },
        'authorization': {
            'mechanism': 'pre_authorization',
            'authority': 'dev-docs guild (ticket DOCS-412)',
            'timestamp': '2026-06-01T07:45:00Z',
            'boundaries': 'convert and redirect only; publishing is a separate decision',
            'consent_checkpoints': [],
        },
        'permissions': {
            'granted': ['gate_command_exec', 'fs_write_repo_scope', 'agent_delegation'],
            'not_granted': ['network_access', 'git_operations'],
        },
        'dependencies': [
            {'name': 'mkdocs', 'kind': 'pinned_input', 'detail': 'mkdocs 1.6.1 with material 9.5'},
        ],
        'resource_envelope': {'limits': [
            {'id': 'wall_clock_h', 'limit': 10, 'unit': 'hours', 'enforcement': 'advisory'},
        ]},
        'tasks': [
            {'id': 'T-inventory', 'title': 'List every wiki page and its new path',
             'prerequisites': [], 'touched_surface': ['docs/migration/inventory.csv'],
             'gate_intent': [{'criterion': 'AC-inventory-complete',
                              'check': 'python3 scripts/docs/check_inventory.py'}]},
            {'id': 'T-convert-guides', 'title': 'Convert the guides to markdown',
             'prerequisites': ['T-inventory'], 'touched_surface': ['docs/site/guides/'],
             'parallel_safe': True,
             'gate_intent': [{'criterion': 'AC-guides-build',
                              'check': 'mkdocs build --strict -f docs/site/mkdocs.yml'}]},
            {'id': 'T-convert-reference', 'title': 'Convert the API reference',
             'prerequisites': ['T-inventory'], 'touched_surface': ['docs/site/reference/'],
             'parallel_safe': True,
             'gate_intent': [{'criterion': 'AC-reference-build',
                              'check': 'python3 scripts/docs/check_reference.py'}]},
            {'id': 'T-redirect-map', 'title': 'Write the redirect map for old wiki URLs',
             'prerequisites': ['T-convert-guides', 'T-convert-reference'],
             'touched_surface': ['docs/site/redirects.yml'],
             'gate_intent': [{'criterion': 'AC-redirects-resolve',
                              'check': 'python3 scripts/docs/check_redirects.py'}]},
        ],
    })
    return doc


def locale_contract():
    """A contract whose text and numbers exercise the JSON corners (escapes, floats, big ints)."""
    title = ('Receipts in the customer\u2019s language \u2014 '
             '\u201cCaf\u00e9 Ol\u00e9\u201d \U0001F680')
    doc = common_contract('v6', 'PLAN_027_receipt_locale_fix', title, '2026-07-10T10:00:00Z')
    doc.update({
        'outcome': {
            'statement': 'Receipts show amounts as "1.234,56 \u20ac" for de-DE, "\u00a51,235" '
                         'for ja-JP and "\u20b91,234.56" for hi-IN.',
            'success_definition': 'The locale tests pass for de-DE, ja-JP and hi-IN.',
            'out_of_scope': ['right-to-left layouts \u2014 tracked in \u00abRTL-9\u00bb'],
        },
        'acceptance': {'criteria': [
            {'id': 'AC-amounts-localized',
             'statement': 'Amounts use the customer\'s locale: "1.234,56 \u20ac", not '
                          '"\u20ac1,234.56".',
             'observable_check': 'the amount formatting test passes for three locales',
             'accepted_evidence': ['observed']},
            {'id': 'AC-footer-translated',
             'statement': 'The footer reads \u201eVielen Dank\u201c in German \U0001F64F and '
                          '\u300c\u3054\u5229\u7528\u3042\u308a\u304c\u3068\u3046\u3054\u3056'
                          '\u3044\u307e\u3059\u300d in Japanese.',
             'observable_check': 'the footer test passes\tfor de-DE and ja-JP',
             'accepted_evidence': ['observed']},
        ]},
        'invariants': [{'id': 'INV-totals-unchanged',
                        'statement': 'Only the rendering changes; stored totals are untouched.'}],
        'scope': {
            'allowed_paths': ['services/receipts/', 'tests/receipts/'],
            'allowed_command_classes': ['pytest'],
            'forbidden_operations': ['resend old receipts'],
        },
        'authorization': {
            'mechanism': 'plan_authorship',
            'authority': 'Jos\u00e9 Nu\u00f1ez',
            'timestamp': '2026-07-10T09:55:00Z',
            'boundaries': 'receipt rendering only \\ no schema change',
            'consent_checkpoints': ['Ask before adding a locale beyond the three "named" ones'],
        },
        'permissions': {'granted': ['gate_command_exec', 'fs_write_repo_scope'],
                        'not_granted': ['network_access']},
        'dependencies': [{'name': 'babel', 'kind': 'pinned_input', 'detail': 'Babel 2.15.0'}],
        'resource_envelope': {'limits': [
            {'id': 'spend_usd', 'limit': 2.5, 'unit': 'USD', 'enforcement': 'advisory',
             'reserve': 0.00001},
            {'id': 'wall_clock_h', 'limit': 8.0, 'unit': 'hours', 'enforcement': 'advisory'},
            {'id': 'log_bytes', 'limit': 1e16, 'unit': 'bytes', 'enforcement': 'advisory'},
            {'id': 'tokens', 'limit': 2 ** 64 * 1000 + 7, 'unit': 'tokens',
             'enforcement': 'advisory'},
        ]},
        'tasks': [
            {'id': 'T-amounts', 'title': 'Format amounts with the customer\u2019s locale '
                                         '(\u20ac, \u00a5, \u20b9)',
             'prerequisites': [], 'touched_surface': ['services/receipts/money.py'],
             'gate_intent': [{'criterion': 'AC-amounts-localized',
                              'check': 'pytest -q tests/receipts/test_money.py'}]},
            {'id': 'T-footer', 'title': 'Translate the footer \u2014 \u201eVielen Dank\u201c '
                                        '\U0001F64F',
             'prerequisites': ['T-amounts'], 'touched_surface': ['services/receipts/footer.py'],
             'gate_intent': [{'criterion': 'AC-footer-translated',
                              'check': 'pytest -q tests/receipts/test_footer.py -k "de or ja"'}]},
        ],
    })
    return doc


def observable_checks(contract, criteria):
    """How an amendment quotes the criteria it changes: `AC-x: check; ...`."""
    return '; '.join('%s: %s' % (c, criterion_of(contract, c)['observable_check'])
                     for c in criteria) or 'no criterion changed'


def task_of(contract, task_id):
    return [t for t in contract['tasks'] if t['id'] == task_id][0]


def criterion_of(contract, criterion_id):
    return [c for c in contract['acceptance']['criteria'] if c['id'] == criterion_id][0]


# --------------------------------------------------------------- markdown

def billing_markdown():
    return {
        'README.md': (
            '# Retry failed card charges with backoff\n\n'
            'Failed card charges are retried after 1h, 6h and 24h instead of every five '
            'minutes, and a retry reuses the first attempt\'s idempotency key.\n\n'
            'The contract is `contract.json`; what happened is in `journal.ndjson`.\n\n'
            '## Tasks\n\n'
            '- T-backoff-schedule: replace the fixed retry interval with a backoff schedule\n'
            '- T-idempotency-keys: carry the idempotency key across retries\n'
            '- T-runbook: update the on-call runbook\n'),
        'PROGRESS.md': (
            '# Progress\n\n'
            'Task status is derived from the journal (`state.json`); these are notes for '
            'people.\n\n'
            '- The retry tests run against stripe-mock 0.188.0.\n'),
    }


def docs_markdown():
    return {
        'README.md': (
            '# Move the product docs from the wiki to the docs site\n\n'
            'Every wiki page moves to `docs/site/`, and every old URL gets a redirect.\n\n'
            '## Tasks\n\n'
            '- T-inventory: list every wiki page and its new path\n'
            '- T-convert-guides: convert the guides (can run in a delegate)\n'
            '- T-convert-reference: convert the API reference (can run in a delegate)\n'
            '- T-redirect-map: write the redirect map\n'),
        'PROGRESS.md': '# Progress\n\nNothing beyond the journal yet.\n',
    }


def locale_markdown():
    return {
        'README.md': ('# Receipts in the customer\u2019s language\n\n'
                      'Amounts and the footer follow the customer\u2019s locale: de-DE, ja-JP '
                      'and hi-IN.\n'),
        'PROGRESS.md': '# Progress\n\nBoth tasks done; see the journal.\n',
    }


PYTEST_OK = '....                                                                     [100%]\n' \
            '4 passed in 0.52s\n'
PYTEST_FAIL = ('F...                                                                     [100%]\n'
               '=================================== FAILURES ===================================\n'
               '________________________ test_retry_reuses_the_key _________________________\n'
               'AssertionError: charge ch_3 created a second PaymentIntent\n'
               '1 failed, 3 passed in 0.61s\n')
MKDOCS_OK = 'INFO    -  Building documentation...\nINFO    -  Documentation built in 1.84 seconds\n'
MKDOCS_FAIL = ('WARNING -  Doc file \'guides/billing.md\' contains a link to '
               '\'../wiki/Billing-FAQ\', which is not found.\n'
               'Aborted with 1 warnings in strict mode!\n')


# ------------------------------------------------------------- base plans

def billing_plan(gen='v6', contract=None):
    return Plan(contract or billing_contract(gen), billing_markdown())


def run_backoff(plan):
    plan.start('T-backoff-schedule')
    plan.gate('T-backoff-schedule', 'AC-backoff-schedule', out=PYTEST_OK)
    plan.observe('INV-no-double-charge: pass')


def run_idempotency(plan, fail_first=True):
    plan.start('T-idempotency-keys')
    if fail_first:
        plan.gate('T-idempotency-keys', 'AC-idempotent-charge', exit_code=1, out=PYTEST_FAIL)
    plan.gate('T-idempotency-keys', 'AC-idempotent-charge', out=PYTEST_OK)


def run_runbook(plan):
    plan.start('T-runbook')
    plan.gate('T-runbook', 'AC-runbook-reviewed')
    plan.observe('INV-no-double-charge: pass')
    plan.observe('INV-webhooks-ack: pass')


def billing_completed():
    plan = billing_plan()
    plan.approve()
    run_backoff(plan)
    run_idempotency(plan)
    run_runbook(plan)
    return plan


def docs_plan(contract=None):
    return Plan(contract or docs_contract(), docs_markdown(), clock='2026-06-01T08:00:00Z')


def run_inventory(plan):
    plan.start('T-inventory')
    plan.gate('T-inventory', 'AC-inventory-complete', out='inventory: 212 pages, 212 mapped\n')


def docs_completed():
    plan = docs_plan()
    plan.approve()
    run_inventory(plan)
    plan.start('T-convert-guides')
    plan.gate('T-convert-guides', 'AC-guides-build', err=MKDOCS_OK)
    plan.start('T-convert-reference')
    plan.gate('T-convert-reference', 'AC-reference-build', out='reference: 48 pages, 311 samples\n')
    plan.start('T-redirect-map')
    plan.gate('T-redirect-map', 'AC-redirects-resolve', out='redirects: 212 of 212 resolve\n')
    plan.observe('INV-wiki-read-only: pass')
    return plan


def docs_in_progress(extra=None):
    plan = docs_plan()
    plan.approve()
    run_inventory(plan)
    plan.start('T-convert-guides')
    if extra:
        extra(plan)
    plan.gate('T-convert-guides', 'AC-guides-build', exit_code=1, err=MKDOCS_FAIL)
    return plan


# ---------------------------------------------------------------- tampers

def journal_lines(files):
    return files['journal.ndjson'].splitlines(keepends=True)


def edit_event(files, seq, change):
    """Rewrite one journal line (found by seq) the way a hand edit would: same framing."""
    lines = journal_lines(files)
    for i, text in enumerate(lines):
        event = json.loads(text)
        if event['seq'] == seq:
            change(event)
            lines[i] = compact(event) + '\n'
            files['journal.ndjson'] = ''.join(lines)
            return
    raise KeyError(seq)


def seq_of(plan, etype, nth=0, **match):
    found = [e['seq'] for e in plan.events if e['type'] == etype
             and all(e.get(k) == v for k, v in match.items())]
    return found[nth]


def log_of(plan, seq):
    return [e for e in plan.events if e['seq'] == seq][0]['evidence_path']


# ------------------------------------------------------------------ cases

CASES = []


def case(folder, description, validate, verify):
    def register(build):
        CASES.append((folder, description, validate, verify, build))
        return build
    return register


OK = (0, [])


@case('record-valid-v6-completed',
      'Valid v6 record plan, every task completed on observed gate evidence (one failed run '
      'before the passing one).', OK, OK)
def _():
    return billing_completed().files()


@case('record-valid-v7-completed',
      'Valid v7 record plan, all four tasks completed in prerequisite order.', OK, OK)
def _():
    return docs_completed().files()


@case('record-valid-v7-in-progress',
      'Valid v7 record plan in progress: one task completed, one started with a failed gate, '
      'two pending.', OK, OK)
def _():
    return docs_in_progress().files()


@case('record-valid-v6-blocked-refusal',
      'Valid v6 plan blocked: completion refused (a refusal event, stage gate) and a '
      'new_authority intervention whose question is the snapshot checkpoint.', OK, OK)
def _():
    plan = billing_plan()
    plan.approve()
    run_backoff(plan)
    plan.start('T-idempotency-keys')
    plan.gate('T-idempotency-keys', 'AC-idempotent-charge', exit_code=1, out=PYTEST_FAIL)
    plan.refuse('T-idempotency-keys', 'gate',
                'criteria without in-window accepted evidence: AC-idempotent-charge')
    plan.intervene('new_authority',
                   'Keeping the key across retries needs a new column on the charges table, '
                   'outside scope.allowed_paths.',
                   'May this plan add a migration under db/migrations/ for charges.retry_key?')
    return plan.files()


@case('record-valid-v7-amended',
      'Valid v7 plan amended to revision 2: contracts/ chain r1+r2, an amendment whose note '
      'names the new contract, an approval citing it, the changed criterion re-run after.',
      OK, OK)
def _():
    return amended_docs().files()


@case('record-valid-v7-amendment-unapproved',
      'Valid v7 plan with an interrupted amendment (chain bootstrapped, revision 2 still a '
      'hidden .pending file, no approval cites it): it invalidates no evidence yet.', OK, OK)
def _():
    plan = docs_plan()
    plan.approve()
    run_inventory(plan)
    plan.start('T-convert-guides')
    plan.gate('T-convert-guides', 'AC-guides-build', err=MKDOCS_OK)
    draft = copy.deepcopy(plan.live)
    criterion_of(draft, 'AC-guides-build')['observable_check'] = \
        'a strict build of the guides exits 0 and reports no orphan page'
    plan.amend(draft, ['AC-guides-build'], ['T-convert-guides'],
               'orphan guides built cleanly but were unreachable from the navigation',
               approved=False)
    return plan.files()


def amended_docs(parent=None, same_substance=False):
    plan = docs_plan()
    plan.approve()
    run_inventory(plan)
    plan.start('T-convert-guides')
    plan.gate('T-convert-guides', 'AC-guides-build', err=MKDOCS_OK)
    draft = copy.deepcopy(plan.live)
    invalidated, affected = [], []
    if not same_substance:
        criterion = criterion_of(draft, 'AC-guides-build')
        criterion['statement'] = 'The converted guides build without warnings and no guide ' \
                                 'is left out of the navigation.'
        criterion['observable_check'] = 'a strict build of the guides exits 0 and reports ' \
                                        'no orphan page'
        invalidated, affected = ['AC-guides-build'], ['T-convert-guides']
    plan.amend(draft, invalidated, affected,
               'orphan guides built cleanly but were unreachable from the navigation',
               readme_line='\nRevision 2: a guide left out of the navigation fails the build '
                           'criterion.\n', parent=parent)
    plan.gate('T-convert-guides', 'AC-guides-build', err=MKDOCS_OK)
    return plan


@case('record-valid-v6-archived',
      'Valid v6 plan with an archived journal segment (journal-archive-000001-000004.ndjson); '
      'the live journal continues above it and the snapshot lists the archive.', OK, OK)
def _():
    return archived_billing().files()


def archived_billing():
    plan = billing_plan()
    plan.approve()
    run_backoff(plan)
    plan.roll()
    run_idempotency(plan, fail_first=False)
    run_runbook(plan)
    return plan


@case('record-dwp109-live-below-archive',
      'DWP109: the first live event was renumbered to the archive\'s last seq (4); the task '
      'it starts now starts at 4, so state.json is stale too (DWP113).',
      (1, ['DWP109']), (1, ['DWP109', 'DWP113']))
def _():
    plan = archived_billing()
    files = plan.files()
    edit_event(files, plan.archive_top() + 1, lambda e: e.update(seq=plan.archive_top()))
    return files


@case('record-valid-v7-dag-parallel',
      'Valid v7 plan with a diamond of prerequisites: two parallel_safe branches run '
      'interleaved, one in a delegate that was launched and collected.', OK, OK)
def _():
    plan = docs_plan()
    plan.approve()
    run_inventory(plan)
    plan.start('T-convert-guides')
    plan.start('T-convert-reference')
    prompt = 'Convert docs/wiki-export/reference/ to docs/site/reference/ keeping code samples.'
    plan.delegate('T-convert-reference', 'd-reference-1', 'launched', kind='claude',
                  target='/srv/repos/shop/.worktrees/reference',
                  worktree='.worktrees/reference', prompt_digest='sha256:' + sha256(prompt))
    plan.gate('T-convert-guides', 'AC-guides-build', err=MKDOCS_OK)
    result = 'Converted 48 reference pages; 311 code samples kept.\n'
    plan.extra['analysis_results/delegations/d-reference-1.md'] = result
    plan.delegate('T-convert-reference', 'd-reference-1', 'completed', kind='claude',
                  target='/srv/repos/shop/.worktrees/reference',
                  worktree='.worktrees/reference',
                  result_path='analysis_results/delegations/d-reference-1.md',
                  result_digest='sha256:' + sha256(result))
    plan.gate('T-convert-reference', 'AC-reference-build', out='reference: 48 pages, 311 samples\n')
    plan.start('T-redirect-map')
    plan.gate('T-redirect-map', 'AC-redirects-resolve', out='redirects: 212 of 212 resolve\n')
    return plan.files()


@case('record-valid-v7-fresh',
      'DWP113 (advisory): a freshly materialized v7 plan (manifest, contract, one approval) '
      'has no state.json yet.', OK, (0, ['DWP113']))
def _():
    plan = docs_plan()
    plan.approve()
    return plan.files(state=False)


@case('record-valid-v6-escapes',
      'Valid v6 plan whose contract has non-ASCII text, emoji, quotes, a tab and a backslash, '
      'float limits (2.5, 1e-05, 8.0, 1e+16) and an integer limit beyond 2^64.', OK, OK)
def _():
    plan = Plan(locale_contract(), locale_markdown(), clock='2026-07-10T10:05:00Z')
    plan.approve(authority='Jos\u00e9 Nu\u00f1ez')
    plan.start('T-amounts')
    plan.gate('T-amounts', 'AC-amounts-localized',
              out='...\n3 passed in 0.20s (de-DE 1.234,56 \u20ac, ja-JP \u00a51,235)\n')
    plan.start('T-footer')
    plan.gate('T-footer', 'AC-footer-translated', out='..\n2 passed in 0.11s\n')
    plan.observe('INV-totals-unchanged: pass')
    return plan.files()


@case('record-valid-v6-resource-samples',
      'Valid v6 plan with resource_sample events (observed host-adapter meters, an asserted '
      'clock sample); the snapshot keeps the latest sample per limit_id.', OK, OK)
def _():
    plan = billing_plan()
    plan.approve()
    plan.start('T-backoff-schedule')
    meter = lambda n, usd: ('meters/spend-%04d.json' % n,
                            pretty({'provider': 'anthropic', 'total_cost_usd': usd}))
    plan.sample('spend_usd', 1.25, 'USD', 'claude-adapter: usage.total_cost_usd', meter(3, 1.25))
    plan.gate('T-backoff-schedule', 'AC-backoff-schedule', out=PYTEST_OK)
    plan.sample('wall_clock_h', 0.75, 'hours', 'session clock, read by the agent')
    plan.start('T-idempotency-keys')
    plan.sample('spend_usd', 1.1 + 2.2, 'USD', 'claude-adapter: usage.total_cost_usd',
                meter(7, 1.1 + 2.2))
    return plan.files()


@case('record-valid-v7-empty-gate-intent',
      'Valid v7 plan with a task whose gate_intent is empty: it is completed as soon as it '
      'starts.', OK, OK)
def _():
    contract = docs_contract()
    contract['tasks'].insert(0, {
        'id': 'T-freeze-wiki', 'title': 'Announce the wiki freeze', 'prerequisites': [],
        'touched_surface': ['docs/migration/FREEZE.md'], 'gate_intent': []})
    plan = docs_plan(contract)
    plan.approve()
    plan.start('T-freeze-wiki')
    run_inventory(plan)
    return plan.files()


@case('record-valid-v6-restarted',
      'Valid v6 plan with a restarted task: the second task_start opens a new window, the '
      'earlier passing run is listed in stale_seqs and the task is in progress again.', OK, OK)
def _():
    plan = billing_plan()
    plan.approve()
    plan.start('T-backoff-schedule')
    plan.gate('T-backoff-schedule', 'AC-backoff-schedule', out=PYTEST_OK)
    plan.start('T-backoff-schedule', dirty=' M services/billing/retry.py')
    plan.gate('T-backoff-schedule', 'AC-backoff-schedule', exit_code=1, out=PYTEST_FAIL)
    return plan.files()


@case('record-valid-v6-asserted-signoff',
      'Valid v6 plan whose runbook criterion (accepts observed and asserted) is closed by a '
      'human sign-off (an asserted gate_run citing the review note); a later view_render '
      'moves neither positions nor updated_at.', OK, OK)
def _():
    plan = billing_plan()
    plan.approve()
    run_backoff(plan)
    run_idempotency(plan, fail_first=False)
    plan.start('T-runbook')
    plan.signoff('T-runbook', 'AC-runbook-reviewed', 'analysis_results/runbook-review.md',
                 '# Runbook review\n\nRead docs/runbooks/billing-retries.md with the on-call '
                 'lead: the retry budget and the per-customer stop are explained.\n')
    plan.observe('INV-no-double-charge: pass')
    view = '# Progress (rendered)\n\n3 of 3 tasks completed.\n'
    plan.extra['views/progress.md'] = view
    plan.append('view_render', {'view': 'progress', 'snapshot_digest': sha256(plan.snapshot()),
                                'digests': {'progress': sha256(view)}},
                {'kind': 'helper', 'identity': 'views.py'})
    return plan.files()


# -- advisories

@case('record-advisory-dwp113-stale-snapshot',
      'DWP113 (advisory): state.json was projected before the last two observations; its '
      'bytes differ from the projection of the journal.', OK, (0, ['DWP113']))
def _():
    plan = billing_completed()
    files = plan.files()
    files['state.json'] = plan.snapshot(upto=plan.events[-3]['seq'])
    return files


@case('record-advisory-dwp112-readme-edited',
      'DWP112 (advisory): README.md was edited after the approval, so the approval\'s '
      'plan_digest no longer matches the plan markdown.', OK, (0, ['DWP112']))
def _():
    files = billing_completed().files()
    files['README.md'] += '\nFollow-up: alert when a customer hits the third retry.\n'
    return files


@case('record-advisory-dwp118-open-delegation',
      'DWP118 (advisory): a v7 delegation was launched and never collected or cancelled.',
      OK, (0, ['DWP118']))
def _():
    prompt = 'Fix the broken wiki links the strict build reports in docs/site/guides/.'
    return docs_in_progress(lambda plan: plan.delegate(
        'T-convert-guides', 'd-guides-1', 'launched', kind='claude',
        target='/srv/repos/shop/.worktrees/guides', worktree='.worktrees/guides',
        prompt_digest='sha256:' + sha256(prompt))).files()


@case('record-advisory-dwp106-no-final-newline',
      'DWP106 (advisory): journal.ndjson\'s last event is complete but lacks its framing '
      'newline.', (0, ['DWP106']), (0, ['DWP106']))
def _():
    files = docs_completed().files()
    files['journal.ndjson'] = files['journal.ndjson'][:-1]
    return files


# -- one tampered thing each

@case('record-dwp001-state-symlink-outside',
      'DWP001: state.json is a symlink to a (correct) snapshot outside the plan folder; an '
      'unreadable snapshot is not compared (no DWP113).', (1, ['DWP001']), (1, ['DWP001']))
def _():
    files = billing_completed().files()
    files['../outside.json'] = files['state.json']
    files['state.json'] = Symlink('../outside.json')
    return files


@case('record-dwp002-contract-duplicate-key',
      'DWP002: contract.json repeats the key "revision"; nothing is derived from an unreadable '
      'live contract.', (1, ['DWP002']), (1, ['DWP002']))
def _():
    files = billing_completed().files()
    files['contract.json'] = files['contract.json'].replace(
        '  "revision": 1,\n', '  "revision": 1,\n  "revision": 1,\n', 1)
    return files


@case('record-dwp004-contract-v8',
      'DWP004: the live contract names plan-contract/v8.json, a generation newer than dwp '
      'knows; no claim is made about the rest.', (5, ['DWP004']), (5, ['DWP004']))
def _():
    contract = docs_contract()
    contract['schema'] = BASE + 'plan-contract/v8.json'
    contract['spec_version'] = '8.0.0'
    plan = docs_plan(contract)
    plan.approve()
    run_inventory(plan)
    files = plan.files()
    return files


@case('record-dwp010-manifest-extra-field',
      'DWP010: manifest.json has a field the closed plan-manifest/v6 object does not allow.',
      (1, ['DWP010']), (1, ['DWP010']))
def _():
    files = billing_completed().files()
    manifest = json.loads(files['manifest.json'])
    manifest['created_by'] = 'maria.lopez'
    files['manifest.json'] = pretty(manifest)
    return files


@case('record-dwp010-contract-missing-dependencies',
      'DWP010: the contract lacks the required field "dependencies" (one schema violation); '
      'nothing is derived from a live contract that fails its schema.',
      (1, ['DWP010']), (1, ['DWP010']))
def _():
    contract = billing_contract()
    del contract['dependencies']
    plan = billing_plan(contract=contract)
    plan.approve()
    run_backoff(plan)
    return plan.files()


@case('record-dwp010-enforced-limit-without-meter',
      'DWP010: an enforced limit without metering_source fails the contract schema\'s '
      'if/then, so the contract rule (DWP102) is never reached.',
      (1, ['DWP010']), (1, ['DWP010']))
def _():
    contract = billing_contract()
    del contract['resource_envelope']['limits'][1]['metering_source']
    plan = billing_plan(contract=contract)
    plan.approve()
    run_backoff(plan)
    return plan.files()


@case('record-dwp100-contract-missing',
      'DWP100: manifest.json points at contract.json, which is absent, and there is no '
      'contracts/ chain.', (1, ['DWP100']), (1, ['DWP100']))
def _():
    files = billing_completed().files()
    files['contract.json'] = None
    return files


@case('record-dwp101-contract-edited-in-place',
      'DWP101: a criterion statement in contract.json was edited in place; the stamped '
      'contract_id no longer matches its canonical bytes.', (1, ['DWP101']), (1, ['DWP101']))
def _():
    files = billing_completed().files()
    contract = json.loads(files['contract.json'])
    criterion_of(contract, 'AC-backoff-schedule')['statement'] = \
        'A failed charge is retried after 1h and 24h; then the invoice is marked past_due.'
    files['contract.json'] = pretty(contract)
    return files


def billing_with(change, tasks_run=2):
    contract = billing_contract()
    change(contract)
    plan = billing_plan(contract=contract)
    plan.approve()
    run_backoff(plan)
    if tasks_run > 1:
        run_idempotency(plan)
    return plan.files()


def add_task(contract, task_id, title, prerequisites, criterion='AC-runbook-reviewed',
             check="grep -q 'retry budget' docs/runbooks/billing-retries.md"):
    contract['tasks'].append({'id': task_id, 'title': title, 'prerequisites': prerequisites,
                              'touched_surface': ['docs/runbooks/billing-alerts.md'],
                              'gate_intent': [{'criterion': criterion, 'check': check}]})


@case('record-dwp102-prerequisite-cycle',
      'DWP102: two pending tasks are each other\'s prerequisite (one cycle).',
      (1, ['DWP102']), (1, ['DWP102']))
def _():
    def change(contract):
        task_of(contract, 'T-runbook')['prerequisites'] = ['T-idempotency-keys', 'T-alerts']
        contract['acceptance']['criteria'].append({
            'id': 'AC-alert-paged',
            'statement': 'On-call is paged when a customer reaches the third retry.',
            'observable_check': 'the alert rule test passes',
            'accepted_evidence': ['observed']})
        add_task(contract, 'T-alerts', 'Page on-call when a customer hits the third retry',
                 ['T-runbook'], criterion='AC-alert-paged',
                 check='pytest -q tests/billing/test_alert_rules.py')
    return billing_with(change)


@case('record-dwp102-dangling-prerequisite',
      'DWP102: a pending task lists a prerequisite that is no task of the contract.',
      (1, ['DWP102']), (1, ['DWP102']))
def _():
    return billing_with(lambda contract: task_of(contract, 'T-runbook')['prerequisites']
                        .append('T-legal-review'))


@case('record-dwp102-permission-overlap',
      'DWP102: network_access is both granted and not granted.',
      (1, ['DWP102']), (1, ['DWP102']))
def _():
    return billing_with(lambda contract: contract['permissions']['granted']
                        .append('network_access'))


@case('record-dwp102-unclosable-criterion',
      'DWP102: a criterion a task declares accepts only imported evidence, which no gate or '
      'sign-off can produce.', (1, ['DWP102']), (1, ['DWP102']))
def _():
    def change(contract):
        contract['acceptance']['criteria'].append({
            'id': 'AC-ledger-export',
            'statement': 'The finance ledger export lists every retried charge once.',
            'observable_check': 'the export matches the charges table',
            'accepted_evidence': ['imported']})
        add_task(contract, 'T-ledger-export', 'Mark retried charges in the finance export',
                 ['T-idempotency-keys'], criterion='AC-ledger-export',
                 check='pytest -q tests/billing/test_ledger_export.py')
    return billing_with(change)


@case('record-dwp103-wrong-parent',
      'DWP103: contracts/contract.r2.json cites a parent_contract_id that is not revision 1\'s '
      'id.', (1, ['DWP103']), (1, ['DWP103']))
def _():
    return amended_docs(parent=sha256('a draft that was never revision 1')).files()


@case('record-dwp103-identical-revision',
      'DWP103: revision 2 is identical to revision 1 once the chain fields are set aside.',
      (1, ['DWP103']), (1, ['DWP103']))
def _():
    return amended_docs(same_substance=True).files()


@case('record-dwp103-contract-json-rewritten',
      'DWP103: contract.json was rewritten (and restamped) after the contracts/ chain began; '
      'it no longer equals contracts/contract.r1.json.', (1, ['DWP103']), (1, ['DWP103']))
def _():
    files = amended_docs().files()
    contract = json.loads(files['contract.json'])
    criterion_of(contract, 'AC-guides-build')['observable_check'] = 'the guides build'
    files['contract.json'] = pretty(stamped(contract))
    return files


@case('record-dwp104-manifest-foreign-id',
      'DWP104: manifest.json\'s contract.id is no revision of this plan\'s contract.',
      (1, ['DWP104']), (1, ['DWP104']))
def _():
    files = billing_completed().files()
    manifest = json.loads(files['manifest.json'])
    manifest['contract']['id'] = stamped(docs_contract())['contract_id']
    files['manifest.json'] = pretty(manifest)
    return files


@case('record-dwp104-v6-manifest-v7-contract',
      'DWP104: manifest.json is plan-manifest/v6 but the live contract is v7.',
      (1, ['DWP104']), (1, ['DWP104']))
def _():
    files = docs_completed().files()
    manifest = json.loads(files['manifest.json'])
    manifest['schema'] = MANIFEST_URL['v6']
    files['manifest.json'] = pretty(manifest)
    return files


@case('record-dwp105-torn-tail',
      'DWP105: journal.ndjson ends in a torn append (a partial line); the snapshot is not '
      'compared against a torn journal.', (1, ['DWP105']), (1, ['DWP105']))
def _():
    files = billing_completed().files()
    files['journal.ndjson'] += '{"actor":{"identity":"dwp-ledger/6.0","kind":"helper"},"contr'
    return files


@case('record-dwp107-extra-event-field',
      'DWP107: an observation event carries a field its closed object does not allow.',
      (1, ['DWP107']), (1, ['DWP107']))
def _():
    plan = billing_completed()
    files = plan.files()
    edit_event(files, seq_of(plan, 'observation'), lambda e: e.update(reviewer='ops'))
    return files


@case('record-dwp107-delegation-under-v6',
      'DWP107: a delegation event (a v7-only type) in the journal of a v6 plan.',
      (1, ['DWP107']), (1, ['DWP107']))
def _():
    plan = billing_plan()
    plan.approve()
    run_backoff(plan)
    plan.start('T-idempotency-keys')
    plan.delegate('T-idempotency-keys', 'd-keys-1', 'completed', kind='claude',
                  worktree='.worktrees/keys')
    plan.gate('T-idempotency-keys', 'AC-idempotent-charge', out=PYTEST_OK)
    return plan.files()


@case('record-dwp108-agent-observed-gate',
      'DWP108: an observed gate_run whose actor is an agent, not a helper or host adapter.',
      (1, ['DWP108']), (1, ['DWP108']))
def _():
    plan = billing_completed()
    files = plan.files()
    edit_event(files, seq_of(plan, 'gate_run', task='T-runbook'),
               lambda e: e.update(actor=dict(AGENT)))
    return files


@case('record-dwp109-seq-backwards',
      'DWP109: two journal lines swapped, so one seq follows a higher one.',
      (1, ['DWP109']), (1, ['DWP109']))
def _():
    files = billing_completed().files()
    lines = journal_lines(files)
    lines[-2], lines[-1] = lines[-1], lines[-2]
    files['journal.ndjson'] = ''.join(lines)
    return files


@case('record-dwp110-gate-wrong-criterion',
      'DWP110: a (failed) gate_run of T-idempotency-keys names a criterion that task does '
      'not declare.', (1, ['DWP110']), (1, ['DWP110']))
def _():
    plan = billing_completed()
    files = plan.files()
    edit_event(files, seq_of(plan, 'gate_run', task='T-idempotency-keys', exit_code=1),
               lambda e: e.update(criterion='AC-backoff-schedule'))
    return files


@case('record-dwp111-approval-cites-draft',
      'DWP111: the only approval cites the id of an earlier draft, not the live contract.',
      OK, (1, ['DWP111']))
def _():
    plan = billing_completed()
    files = plan.files()
    draft = billing_contract()
    draft['title'] = 'Retry failed card charges'
    edit_event(files, seq_of(plan, 'approval'),
               lambda e: e.update(contract_id=stamped(draft)['contract_id']))
    return files


@case('record-dwp114-gate-log-missing',
      'DWP114: the log of an observed gate_run was deleted.', OK, (1, ['DWP114']))
def _():
    plan = billing_completed()
    files = plan.files()
    files[log_of(plan, seq_of(plan, 'gate_run', task='T-backoff-schedule'))] = None
    return files


@case('record-dwp115-gate-log-edited',
      'DWP115: a passing run\'s log was edited to end with "--- exit 1 ---".',
      OK, (1, ['DWP115']))
def _():
    plan = billing_completed()
    files = plan.files()
    log = log_of(plan, seq_of(plan, 'gate_run', task='T-backoff-schedule'))
    files[log] = files[log].replace('--- exit 0 ---', '--- exit 1 ---')
    return files


@case('record-dwp115-journal-exit-edited',
      'DWP115: a failed gate_run\'s exit_code was edited to 0 in the journal; its log still '
      'ends "--- exit 1 ---", and state.json is now stale (DWP113).',
      OK, (1, ['DWP113', 'DWP115']))
def _():
    plan = docs_in_progress()
    files = plan.files()
    edit_event(files, seq_of(plan, 'gate_run', exit_code=1), lambda e: e.update(exit_code=0))
    return files


@case('record-dwp116-started-early',
      'DWP116: T-idempotency-keys was started while its prerequisite T-backoff-schedule had no '
      'passing evidence yet.', OK, (1, ['DWP116']))
def _():
    plan = billing_plan()
    plan.approve()
    plan.start('T-backoff-schedule')
    plan.start('T-idempotency-keys')
    plan.gate('T-backoff-schedule', 'AC-backoff-schedule', out=PYTEST_OK)
    plan.gate('T-idempotency-keys', 'AC-idempotent-charge', out=PYTEST_OK)
    return plan.files()


@case('record-dwp117-log-of-other-task',
      'DWP117: a gate_run of T-idempotency-keys cites a log under gates/T-backoff-schedule/.',
      OK, (1, ['DWP117']))
def _():
    plan = billing_plan()
    plan.approve()
    run_backoff(plan)
    plan.start('T-idempotency-keys')
    plan.gate('T-idempotency-keys', 'AC-idempotent-charge', out=PYTEST_OK,
              log_task='T-backoff-schedule')
    return plan.files()


# ------------------------------------------------------------------ write

def plan_name(files):
    return json.loads(files['manifest.json'])['plan'] if 'manifest.json' in files else None


def write_case(root, folder, description, validate, verify, files):
    case_dir = os.path.join(root, folder)
    name = plan_name(files) or json.loads(files['contract.json'])['plan']
    plan_dir = os.path.join(case_dir, name)
    os.makedirs(plan_dir)
    for rel in sorted(files):
        content = files[rel]
        if content is None:
            continue
        path = os.path.normpath(os.path.join(plan_dir, rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, Symlink):
            os.symlink(content.target, path)
            continue
        with open(path, 'wb') as fh:
            fh.write(content.encode('utf-8'))
    expected = {'description': description,
                'validate': {'exit': validate[0], 'codes': sorted(validate[1])},
                'verify': {'exit': verify[0], 'codes': sorted(verify[1])}}
    with open(os.path.join(case_dir, 'expected.json'), 'w', encoding='utf-8') as fh:
        fh.write(json.dumps(expected, indent=2) + '\n')


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.exit('usage: python3 scripts/record_fixtures.py conformance-fixtures')
    root = argv[1]
    for name in sorted(os.listdir(root)):
        if name.startswith('record-'):
            shutil.rmtree(os.path.join(root, name))
    for folder, description, validate, verify, build in CASES:
        write_case(root, folder, description, validate, verify, build())
    print('wrote %d record-plan fixtures under %s' % (len(CASES), root))


if __name__ == '__main__':
    main(sys.argv)
