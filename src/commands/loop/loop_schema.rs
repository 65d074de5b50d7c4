//! The loop's JSON Schemas (`schemas/loop/*.schema.json`), embedded with `include_str!` and
//! compiled once per process, like the plan schemas in [`crate::plan::schemas`]. They live in their own
//! folder: `schemas/` itself holds the plan generations the parity corpus checks.

use crate::plan::schemas::{EmbeddedSchema, Violation, violations};
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

    /// The embedded schema (`schemas/loop/`).
    pub fn embedded(self) -> &'static EmbeddedSchema {
        match self {
            LoopSchema::Verify => &crate::plan::schemas::LOOP_VERIFY,
            LoopSchema::Dod => &crate::plan::schemas::LOOP_DOD,
            LoopSchema::ConfigDod => &crate::plan::schemas::LOOP_CONFIG_DOD,
        }
    }

    fn validator(self) -> &'static Validator {
        static CELLS: [OnceLock<Validator>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        crate::plan::schemas::compiled(&CELLS[self as usize], self.embedded())
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
                schema.embedded().file_name
            );
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
