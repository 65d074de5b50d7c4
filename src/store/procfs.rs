//! The one thing dwp reads of `/proc`: which processes are the children of a process (the
//! leftovers of a command `dwp run` or `dwp loop prove` ran, adopted by dwp as their subreaper).

/// The pids whose parent is `parent`, from each `/proc/<pid>/stat` (a process that ends while
/// it is read is left out); none where `/proc` cannot be read.
pub fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// The parent pid in `/proc/<pid>/stat`: the second field after the command name, which ends
/// at the last `)` (a name may hold spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}
