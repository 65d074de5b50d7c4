//! The private `HOME` of a command dwp runs (`dwp run`, `dwp loop prove`): an empty folder in
//! the temp folder that only dwp's user can enter (0700: a command's caches and tokens there are
//! not the machine's to read), named `dwp-home-<pid>-...` after the dwp that made it. It is
//! removed when the run ends; one a killed dwp left behind is removed by the next dwp to make
//! one, once its pid is no longer running (a folder of another user, or of a live dwp, is left).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

const PREFIX: &str = "dwp-home-";

/// A new private home, after the homes of dead dwp runs are removed.
pub fn create() -> std::io::Result<tempfile::TempDir> {
    let temp = std::env::temp_dir();
    remove_stale(&temp);
    tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&temp)
}

/// Remove each `dwp-home-<pid>-*` folder of `temp` that is this user's and whose pid is gone;
/// a failure leaves it for a later run.
fn remove_stale(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.is_dir() && meta.uid() == me && !super::procfs::process_exists(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
