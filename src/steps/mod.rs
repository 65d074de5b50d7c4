//! The steps several commands share: the guarded update of one task (`updater`), publication
//! (`publication`), materializing a plan's state layer (`materialize`, for `init` and `new`), and what every writer does around its write (`writer`). Commands call these;
//! they never import each other.

pub mod materialize;
pub mod publication;
pub mod updater;
pub mod writer;
