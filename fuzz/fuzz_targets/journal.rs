//! A record plan's journal on arbitrary bytes, as dwp reads `journal.ndjson`: the framing and
//! each event's checks (`dwp::rules::record::standalone_journal`), the projection and the
//! cross-event rules over the events read, under a fixed v7 contract; and the same bytes read as
//! one record document (`standalone_document`, the contract rules, Python's bytes). None of them
//! may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

/// A contract of the fixture corpus, to project the fuzzed events under.
const CONTRACT: &str = include_str!(
    "../../conformance-fixtures/record-valid-v7-dag-parallel/PLAN_021_docs_site_migration/contract.json"
);

fuzz_target!(|data: &[u8]| {
    dwp::rules::record::read_untrusted(data, CONTRACT);
});
