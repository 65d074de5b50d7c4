//! One module per subcommand, named after it. A command never imports another: what two need
//! is a step (`crate::steps`), a rule (`crate::rules`) or the loaded plan (`crate::plan`).

pub mod amend;
pub mod approve;
pub mod contract;
pub mod finalize;
pub mod init;
pub mod lock;
pub mod r#loop;
pub mod migrate;
pub mod new;
pub mod next;
pub mod reconcile;
pub mod run;
pub mod schema;
pub mod status;
pub mod update;
pub mod validate;
pub mod verify;
