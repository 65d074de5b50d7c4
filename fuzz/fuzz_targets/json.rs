//! The strict JSON reader on arbitrary bytes, as dwp reads state.json and manifest.json: the
//! strict parser (`dwp::plan::json::parse_strict`), the state reader
//! (`dwp::plan::state_from_bytes`), the manifest reader (`dwp::plan::from_value`) and the
//! invariants run on whatever they type. None of them may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    dwp_fuzz_json(data);
});

fn dwp_fuzz_json(data: &[u8]) {
    use dwp::plan::model::{DocKind, Manifest};
    use std::path::Path;
    if let Ok(state) = dwp::plan::state_from_bytes(Path::new("state.json"), data.to_vec()) {
        let _ = dwp::rules::invariants::check_state(&state);
    }
    if let Some((generation, state)) = dwp::plan::typed_schema::state(data) {
        let by_schema = dwp::plan::state_from_bytes_by_schema(Path::new("state.json"), data.to_vec())
            .expect("the typed check accepted a state the schema path refuses");
        assert_eq!((by_schema.generation, by_schema.doc), (generation, state));
    }
    if let Ok(value) = dwp::plan::json::parse_strict(data) {
        let path = Path::new("manifest.json");
        let manifest = dwp::plan::from_value::<Manifest>(path, data.to_vec(), value, DocKind::Manifest);
        if let Ok(manifest) = manifest {
            let _ = dwp::rules::invariants::check_manifest(&manifest);
        }
    }
}
