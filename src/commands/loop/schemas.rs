//! The loop's JSON Schemas (`schemas/loop/*.schema.json`), embedded with `include_str!` and
//! compiled once per process, like the plan schemas in [`crate::plan::schema`]. They live in their own
//! folder: `schemas/` itself holds the plan generations the parity corpus checks.

use crate::plan::schema::{Violation, violations};
use jsonschema::Validator;
use serde_json::Value;
use std::sync::OnceLock;

/// One of the loop's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopSchema {
    Verify,
    Dod,
    ConfigDod,
}

impl LoopSchema {
    pub const ALL: [LoopSchema; 3] = [LoopSchema::Verify, LoopSchema::Dod, LoopSchema::ConfigDod];

    /// The file name under `schemas/loop/`.
    pub fn file_name(self) -> &'static str {
        match self {
            LoopSchema::Verify => "verify.schema.json",
            LoopSchema::Dod => "dod.schema.json",
            LoopSchema::ConfigDod => "config-dod.schema.json",
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            LoopSchema::Verify => include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/schemas/loop/verify.schema.json"
            )),
            LoopSchema::Dod => include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/schemas/loop/dod.schema.json"
            )),
            LoopSchema::ConfigDod => include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/schemas/loop/config-dod.schema.json"
            )),
        }
    }

    fn validator(self) -> &'static Validator {
        static CELLS: [OnceLock<Validator>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let schema = crate::plan::schema::EmbeddedSchema {
            file_name: self.file_name(),
            text: self.text(),
        };
        crate::plan::schema::compiled(&CELLS[self as usize], &schema)
    }

    /// Every violation of this schema by `instance`, paths rooted at `root` (`$` or `$.dod`).
    pub fn check(self, instance: &Value, root: &str) -> Vec<Violation> {
        let mut found = violations(self.validator(), instance);
        for violation in &mut found {
            let rest = violation.path.strip_prefix('$').unwrap_or(&violation.path);
            violation.path = format!("{root}{rest}");
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loop_schema_compiles() {
        for schema in LoopSchema::ALL {
            assert!(
                schema.check(&Value::Null, "$").len() == 1,
                "{}",
                schema.file_name()
            );
        }
    }

    #[test]
    fn schemas_loop_holds_exactly_the_embedded_schemas() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/loop");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<&str> = LoopSchema::ALL.iter().map(|s| s.file_name()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
        for schema in LoopSchema::ALL {
            let file = std::fs::read_to_string(dir.join(schema.file_name())).unwrap();
            assert_eq!(file, schema.text(), "{}", schema.file_name());
        }
    }

    #[test]
    fn a_proof_marked_observed_by_dwp_must_name_its_command_time_and_log() {
        let dod = serde_json::json!({"project": [
            {"id": "t", "status": "passed", "evidence": "ok", "observedBy": "dwp"}
        ]});
        let found = LoopSchema::Dod.check(&dod, "$");
        assert!(found.iter().any(|v| v.path == "$.project[0]"), "{found:?}");
    }
}
