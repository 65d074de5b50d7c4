//! `dwp schema`: the JSON Schemas dwp embeds (the plan documents, the record-plan documents of
//! DWP v6/v7, the receipt, the contract's and the loop's files, and `output`, the schema of every
//! `--json` document), listed or one by name.

use crate::error::{Error, Result};
use crate::plan::schemas::{ALL, EmbeddedSchema, named};

/// The names of every embedded schema, in the order `dwp schema` lists them.
pub fn list() -> Vec<&'static str> {
    ALL.iter().map(|s| s.name()).collect()
}

/// The embedded schema called `name`.
pub fn get(name: &str) -> Result<&'static EmbeddedSchema> {
    named(name).ok_or_else(|| {
        Error::Usage(format!(
            "no embedded schema is called `{name}`; `dwp schema` lists their names"
        ))
    })
}
