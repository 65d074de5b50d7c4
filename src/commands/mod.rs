//! One module per command. A command never imports another: what two need is a step
//! (`crate::steps`), a rule (`crate::rules`) or the plan's loading (`crate::plan`).

pub mod amend;
pub mod approve;
pub mod contract;
pub mod finalize;
pub mod r#loop;
pub mod materialize;
pub mod new_plan;
pub mod next;
pub mod reconcile;
pub mod recover;
pub mod run;
pub mod status;
pub mod update;
pub mod validate;
pub mod verify;
