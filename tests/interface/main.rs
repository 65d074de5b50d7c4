//! The interface every command shares: help, completions and man pages, the one printer and its
//! `--json` contract, inert terminal output, hints and flag names that work, the documented
//! examples run as written, and the smaller hardening defects.

#[path = "../common/mod.rs"]
mod common;

mod colour;
mod completions;
mod doc_examples;
mod flag_names;
mod hardening;
mod help;
mod hints;
mod inert_output;
mod json_contract;
mod output;
mod paths;
