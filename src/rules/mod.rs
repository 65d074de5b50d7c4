//! Judgements over a loaded plan (`crate::plan::LoadedPlan`): the invariants the schema cannot
//! state, evidence truth, the observed gates' logs, the desync rule, the state derived from the
//! markdown, the receipt digest and the conformance rules of `dwp verify`. They read plan files
//! only through the loaded plan, never through the store, and never write.

pub mod conformance;
pub mod desync;
pub mod evidence;
pub mod invariants;
pub mod observed;
pub mod receipt;
pub mod record;
pub mod regenerate;
