#!/usr/bin/env python3
"""The record plans (DWP v7) docs/PERFORMANCE.md measures `dwp verify` on (untimed):

    python3 benches/record_plans.py OUT

writes two plans, each at the starting point `verify` and laid out as benches/plans.sh lays out
its v5 plans (the plan folder inside the starting point's folder):

    OUT/r6/verify/PLAN_...      6 tasks and 60 journal events
    OUT/r1000/verify/PLAN_...   1,000 tasks and 10,000 journal events

The first half of the tasks is completed, each on a failing then a passing observed gate run per
criterion (a third of the tasks have two criteria), with the scheduler's selection, a refusal
after the failure, invariant observations, resource samples and a view render. Of the rest,
those whose prerequisites are completed are started, but for every fourth (left ready), and
stand on one failed gate; the others are pending. Prerequisites form a sparse DAG: each task
depends on one earlier task, every fourth on two; every fifth is parallel_safe. A few
monitoring events (samples, renders, observations) spread over the completed tasks bring the
journal to its exact size. Top-level markdown: README.md, PROGRESS.md and one short file per
task, as in a v5 Full plan of the same size, all digested by the one approval.

The bytes (contract id, journal framing, gate logs, state.json) are those of the plans in
conformance-fixtures, written by the same code: scripts/record_fixtures.py's `Plan`. The
output is byte for byte the same on every run. Python 3 standard library only.
"""

import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))
import record_fixtures as rf  # noqa: E402  (the fixtures' writer, found through sys.path)

PLAN_NAME = 'PLAN_041_shop_services_split'
AREAS = ['orders', 'invoices', 'carts', 'customers', 'catalog', 'search', 'shipping',
         'returns', 'payments', 'coupons']
STEPS = [('schema', 'Move the %s tables to the service schema'),
         ('api', 'Port the %s API handlers to the service'),
         ('events', 'Publish %s change events'),
         ('backfill', 'Backfill %s history into the service'),
         ('docs', 'Document the %s endpoints')]
INVARIANTS = [('INV-api-compatible', 'Every public endpoint keeps its request and response '
                                     'shape.'),
              ('INV-no-data-loss', 'No row of the monolith is dropped by a move.'),
              ('INV-p99-latency', 'p99 latency of the checkout path stays under 300 ms.')]
PYTEST_OK = '........                                                                 [100%]\n' \
            '8 passed in 1.12s\n'
PYTEST_FAIL = ('.F......                                                                 [100%]\n'
               '=================================== FAILURES ===================================\n'
               'AssertionError: response lacks the `currency` field\n'
               '1 failed, 7 passed in 1.20s\n')


# ------------------------------------------------------------------ shape

def task_id(i):
    return 'T-%s-%s-%04d' % (AREAS[(i - 1) % len(AREAS)], STEPS[(i - 1) // len(AREAS) %
                                                                len(STEPS)][0], i)


def title(i):
    return '%s (part %d)' % (STEPS[(i - 1) // len(AREAS) % len(STEPS)][1]
                             % AREAS[(i - 1) % len(AREAS)], i)


def criteria_of(i):
    """A task's criteria: its tests, and for every third task a contract check too."""
    stem = task_id(i)[2:]
    found = [('AC-%s-tests' % stem, 'pytest -q tests/%s/test_part_%04d.py'
              % (AREAS[(i - 1) % len(AREAS)], i))]
    if i % 3 == 0:
        found.append(('AC-%s-contract' % stem,
                      'python3 scripts/check_contract.py --part %04d' % i))
    return found


def prerequisites(i):
    """One earlier task spread over all of them (two for every fourth): a sparse DAG."""
    if i == 1:
        return []
    found = [(i * 7919) % (i - 1) + 1]
    if i % 4 == 0 and i > 2:
        second = (i * 104729) % (i - 1) + 1
        if second not in found:
            found.append(second)
    return sorted(found)


def contract(n):
    doc = rf.common_contract('v7', PLAN_NAME, 'Split the shop monolith into services',
                             '2026-08-03T07:30:00Z')
    criteria, tasks = [], []
    for i in range(1, n + 1):
        area = AREAS[(i - 1) % len(AREAS)]
        intents = []
        for criterion, check in criteria_of(i):
            criteria.append({'id': criterion,
                             'statement': '%s: the moved code behaves as before.' % title(i),
                             'observable_check': '`%s` exits 0' % check,
                             'accepted_evidence': ['observed']})
            intents.append({'criterion': criterion, 'check': check})
        task = {'id': task_id(i), 'title': title(i),
                'prerequisites': [task_id(p) for p in prerequisites(i)],
                'touched_surface': ['services/%s/' % area, 'tests/%s/' % area],
                'gate_intent': intents}
        if i % 5 == 0:
            task['parallel_safe'] = True
        tasks.append(task)
    doc.update({
        'outcome': {'statement': 'Orders, invoices, carts and the rest run as services of '
                                 'their own behind the same public API.',
                    'success_definition': 'Every part passes its tests and contract check.',
                    'out_of_scope': ['new features', 'a new public API version']},
        'acceptance': {'criteria': criteria},
        'invariants': [{'id': i, 'statement': s} for i, s in INVARIANTS],
        'scope': {'allowed_paths': ['services/', 'tests/', 'scripts/', 'docs/'],
                  'allowed_command_classes': ['pytest', 'python3'],
                  'forbidden_operations': ['deploy to production', 'drop monolith tables']},
        'authorization': {'mechanism': 'plan_authorship',
                          'authority': 'maria.lopez (platform lead)',
                          'timestamp': '2026-08-03T07:45:00Z',
                          'boundaries': 'this plan only; no deploys',
                          'consent_checkpoints': ['Ask before changing a public endpoint']},
        'permissions': {'granted': ['gate_command_exec', 'fs_write_repo_scope',
                                    'git_operations'],
                        'not_granted': ['network_access', 'agent_delegation']},
        'dependencies': [{'name': 'postgres', 'kind': 'pinned_input',
                          'detail': 'postgres 16.4 serves the test suite'}],
        'resource_envelope': {'limits': [
            {'id': 'wall_clock_h', 'limit': 800, 'unit': 'hours', 'enforcement': 'advisory'},
            {'id': 'spend_usd', 'limit': 900, 'unit': 'USD', 'enforcement': 'advisory'},
        ]},
        'tasks': tasks,
    })
    return doc


def markdown(n):
    files = {
        'README.md': '# Split the shop monolith into services\n\n'
                     'Each part moves one slice of the monolith behind the same public API.\n\n'
                     'The contract is `contract.json`; what happened is in `journal.ndjson`.\n\n'
                     '## Tasks\n\n' + ''.join('- %s: %s\n' % (task_id(i), title(i))
                                              for i in range(1, n + 1)),
        'PROGRESS.md': '# Progress\n\nTask status is derived from the journal (`state.json`); '
                       'these are notes for people.\n\n- The tests run against postgres 16.4.\n',
    }
    for i in range(1, n + 1):
        files['%s.md' % task_id(i)] = '# %s\n\n%s.\n\nGates: %s.\n' % (
            task_id(i), title(i), ', '.join('`%s`' % c for _, c in criteria_of(i)))
    return files


# ----------------------------------------------------------------- journal

class Journal:
    """Writes the events of one plan in the order the ledger's verbs would append them."""

    def __init__(self, n, extras):
        self.plan = rf.Plan(contract(n), markdown(n), clock='2026-08-03T08:00:00Z')
        self.n, self.extras = n, extras
        self.spent, self.hours = 0.0, 0

    def monitor(self, i, k):
        """The k-th monitoring event after task i: a sample, a render or an observation."""
        kind = k % 3
        if kind == 0:
            self.sample()
        elif kind == 1:
            self.render()
        else:
            self.plan.observe('%s: pass' % INVARIANTS[(i + k) % len(INVARIANTS)][0])

    def sample(self):
        self.spent = round(self.spent + 0.35, 2)
        self.plan.sample('spend_usd', self.spent, 'USD', 'agent estimate from session usage')

    def render(self):
        # A stand-in snapshot digest: no rule reads it back, and projecting the snapshot at
        # every render would make writing the plan quadratic.
        seq = self.plan.next_seq()
        progress = self.plan.markdown['PROGRESS.md']
        self.plan.append('view_render', {
            'view': 'PROGRESS.md',
            'snapshot_digest': rf.sha256('%s:%d' % (PLAN_NAME, seq)),
            'digests': {'PROGRESS.md': rf.sha256(progress)}}, self.plan.helper())

    def select(self, i):
        payload = {'task': task_id(i), 'priority_boost': i % 7 == 0}
        if payload['priority_boost']:
            payload['aging'] = {'waiting_since_seq': 1, 'threshold': '40 events'}
        self.plan.append('selection', payload, self.plan.helper())

    def complete(self, i):
        self.select(i)
        self.plan.start(task_id(i))
        for number, (criterion, _) in enumerate(criteria_of(i)):
            self.plan.gate(task_id(i), criterion, exit_code=1, out=PYTEST_FAIL)
            if number == 0:
                self.plan.refuse(task_id(i), 'gate', 'criteria without in-window accepted '
                                                     'evidence: %s' % criterion)
            self.plan.gate(task_id(i), criterion, out=PYTEST_OK)
        for invariant, _ in INVARIANTS:
            self.plan.observe('%s: pass' % invariant)
        self.sample()
        self.hours += 1
        self.plan.sample('wall_clock_h', self.hours, 'hours', 'agent session clock')
        self.render()
        for k in range(self.extras.get(i, 0)):
            self.monitor(i, k)

    def begin(self, i):
        self.select(i)
        self.plan.start(task_id(i))
        criterion = criteria_of(i)[0][0]
        self.plan.gate(task_id(i), criterion, exit_code=1, out=PYTEST_FAIL)
        self.plan.observe('%s: pass' % INVARIANTS[i % len(INVARIANTS)][0])

    def write(self):
        half = self.n // 2
        self.plan.approve()
        for i in range(1, half + 1):
            self.complete(i)
        for i in range(half + 1, self.n + 1):
            if i % 4 and all(p <= half for p in prerequisites(i)):
                self.begin(i)
        return self.plan


def build(n, events):
    """The plan of n tasks whose journal holds exactly `events` events."""
    base = len(Journal(n, {}).write().events)
    deficit = events - base
    if deficit < 0:
        sys.exit('record_plans.py: %d tasks already make %d events, more than %d'
                 % (n, base, events))
    half = n // 2
    extras = {i: deficit // half + (1 if i <= deficit % half else 0) for i in range(1, half + 1)}
    plan = Journal(n, extras).write()
    assert len(plan.events) == events
    return plan


def write(folder, plan):
    shutil.rmtree(folder, ignore_errors=True)
    root = os.path.join(folder, plan.name)
    for rel, text in sorted(plan.files().items()):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as fh:
            fh.write(text.encode('utf-8'))
    print('%s: %d tasks, %d events' % (root, len(plan.live['tasks']), len(plan.events)))


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    out = argv[1]
    for label, tasks, events in (('r6', 6, 60), ('r1000', 1000, 10000)):
        write(os.path.join(out, label, 'verify'), build(tasks, events))


if __name__ == '__main__':
    main(sys.argv)
