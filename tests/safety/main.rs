//! What keeps plan files safe: atomic and durable writes, multi-file writes recovered after a
//! kill, updates under contention, hostile files, and the source rules (only the store opens
//! files, no import from a layer above).

#[path = "../common/mod.rs"]
mod common;

mod crash_points;
mod hostile_files;
mod intent_recovery;
mod layers;
mod lock_recovery_race;
mod record_concurrency;
mod store_durability;
mod store_only;
mod update_concurrency;
