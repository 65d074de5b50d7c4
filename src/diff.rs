//! A unified diff of a file's bytes, for the previews of `dwp update --dry-run` and
//! `dwp reconcile --diff`.

/// Unified diff of a file's bytes before and after, for `--dry-run` and `--diff` previews.
pub fn unified_diff(before: &[u8], after: &[u8], name: &str) -> String {
    let before = String::from_utf8_lossy(before);
    let after = String::from_utf8_lossy(after);
    similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("{name} (on disk)"), &format!("{name} (after)"))
        .to_string()
}
