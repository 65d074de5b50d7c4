//! The steps several commands share: the one writer of plan folders (`commit`), the guarded
//! update of one task (`updater`), publication (`publication`), materializing a plan's state
//! layer (`materialize`, for `init` and `new`), what every writer does around its change
//! (`writer`), keeping an observed run's log (`gate_log`), and running one command as argv with
//! the minimal environment (`process`, `command_env`), for `loop prove` and `run`. Commands call
//! these; they never import each other.

pub mod command_env;
pub mod commit;
pub mod gate_log;
pub mod materialize;
pub mod process;
pub mod publication;
pub mod record_amend;
pub mod record_materialize;
pub mod record_writer;
pub mod updater;
pub mod writer;
