//! Evidence truth: the one place that decides whether gate records may back a completion.
//!
//! Shared by `dwp update` (refuses to complete), `dwp finalize` and `dwp verify` (report), so the
//! three can never disagree. The rules (the plan-state spec's "Gate records", "Evidence truth and amendments"):
//! the latest record per command counts; it must pass with exit code 0 and non-empty evidence;
//! evidence "invalidated by refine" is history, never passing evidence; a passing record whose
//! own text admits the check never ran, or selected nothing, is a contradiction; a `log=` pointer
//! must name a file inside the plan folder that exists; a record dwp observed (`dwp run`) must be
//! backed by its log ([`crate::rules::observed`]).

use crate::plan::LoadedPlan;
use crate::plan::model::Gate;
use memchr::memmem::Finder;
use std::path::{Component, Path};
use std::sync::LazyLock;

/// Prefix that marks gate evidence invalidated by an amendment.
pub const INVALIDATED_PREFIX: &str = "invalidated by refine";

/// Phrases by which evidence admits the check never ran. When a count stands right before one
/// ("12 passed, 0 not run") it is a tally of a run, not an admission.
const NEVER_RAN: &[&str] = &[
    "never ran",
    "never run",
    "never executed",
    "never entered",
    "did not run",
    "didn't run",
    "does not run",
    "was not run",
    "were not run",
    "not run",
    "not executed",
    "unexecuted",
    "structurally impossible",
    "cannot be measured",
    "could not be measured",
    "can't be measured",
    "cannot be run",
    "could not run",
    "couldn't run",
];

/// Evidence that the check selected nothing: it ran, but proved nothing. Counts written
/// `KEY = 0` and the `no test(s) ran` sentences are read by [`ZERO_COUNT`] and [`NO_TEST`].
const ZERO_SELECTION: &[&str] = &[
    "collected 0 items",
    "no tests ran",
    "no tests to run",
    "no tests collected",
    "no test files found",
    "ran 0 tests",
    "0 tests ran",
    "running 0 tests",
    "0 passed",
    "0 tests passed",
    "executed 0 of",
    "0 examples",
    "no tests found",
    "no test files",
];

/// A searcher per phrase, built once: building one costs more than running it over a short
/// evidence string, and a verify of 1,000 tasks checks every gate record against each phrase.
type Searchers = LazyLock<Vec<Finder<'static>>>;

fn searchers(phrases: &'static [&'static str]) -> Vec<Finder<'static>> {
    phrases.iter().map(Finder::new).collect()
}

static NEVER_RAN_SEARCH: Searchers = LazyLock::new(|| searchers(NEVER_RAN));
static ZERO_SELECTION_SEARCH: Searchers = LazyLock::new(|| searchers(ZERO_SELECTION));

/// A count of what ran, selected or executed, written `KEY=0`, `KEY = 0`, `KEY=0/12`: the
/// counts the public reference tooling reads as zero-selection (`executed=0/0`, `ran = 0`). A
/// whole word only: `deselected=0` and `failed=0` are honest tallies of a run.
static ZERO_COUNT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)\b(?:ran|selected|executed)\s*=\s*0\b").expect("a fixed pattern")
});

/// `no test ran`, `no tests found`, `No tests collected`, in any case and spacing.
static NO_TEST: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)\bno\s+tests?\s+(?:ran|found|collected)\b").expect("a fixed pattern")
});

/// What is wrong with one gate record as evidence for completing a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateProblem {
    EmptyCommand,
    EmptyEvidence,
    Fails,
    /// `passes: true` but the exit code is missing or non-zero.
    ExitCode(Option<i64>),
    Invalidated,
    AdmitsNeverRan(&'static str),
    ZeroSelection(String),
    LogEscapes(String),
    LogMissing(String),
    /// An observed gate whose log does not back it ([`crate::rules::observed`]).
    Provenance(String),
}

impl GateProblem {
    /// What to do about it: a run that checked nothing is not fixed by running it again as it
    /// is, and a log pointer by pointing at the log.
    pub fn remedy(&self) -> &'static str {
        match self {
            GateProblem::AdmitsNeverRan(_) | GateProblem::ZeroSelection(_) => {
                "the run checked nothing: make the command run the task's tests, then record a run that did"
            }
            GateProblem::LogEscapes(_) | GateProblem::LogMissing(_) => {
                "keep the run's log inside the plan folder and point `log=` at it"
            }
            GateProblem::Provenance(_) => {
                "run the check again through `dwp run`: a log dwp kept is never edited"
            }
            GateProblem::EmptyCommand | GateProblem::EmptyEvidence => {
                "record the command and what its run printed"
            }
            GateProblem::Fails | GateProblem::ExitCode(_) | GateProblem::Invalidated => {
                "re-run the check until it passes and record that run of the same command"
            }
        }
    }

    pub fn describe(&self) -> String {
        match self {
            GateProblem::EmptyCommand => "has an empty command".into(),
            GateProblem::EmptyEvidence => "has no evidence".into(),
            GateProblem::Fails => "failed (passes: false) and no later run of it passed".into(),
            GateProblem::ExitCode(None) => "records no exit code".into(),
            GateProblem::ExitCode(Some(code)) => format!("exited {code}, not 0"),
            GateProblem::Invalidated => {
                "was invalidated by refine: retained history, never passing evidence".into()
            }
            GateProblem::AdmitsNeverRan(phrase) => {
                format!("passes, but its evidence admits the check never ran (\"{phrase}\")")
            }
            GateProblem::ZeroSelection(phrase) => {
                format!("passes, but its evidence shows it selected nothing (\"{phrase}\")")
            }
            GateProblem::LogEscapes(path) => {
                format!("points at log `{path}` outside the plan folder")
            }
            GateProblem::LogMissing(path) => {
                format!("points at log `{path}`, which does not exist")
            }
            GateProblem::Provenance(why) => format!("was observed by dwp, but {why}"),
        }
    }
}

/// The record that counts for each command: the last one in the list. Order of first appearance.
pub fn latest_per_command(gates: &[Gate]) -> Vec<&Gate> {
    let mut latest: Vec<&Gate> = Vec::new();
    for gate in gates {
        match latest.iter_mut().find(|g| g.command == gate.command) {
            Some(slot) => *slot = gate,
            None => latest.push(gate),
        }
    }
    latest
}

/// The latest record of each command that passes and was not invalidated by refine: what a
/// task's evidence still stands on.
pub fn standing_passes(gates: &[Gate]) -> impl Iterator<Item = &Gate> {
    latest_per_command(gates)
        .into_iter()
        .filter(|g| g.passes && !is_invalidated(g.evidence.as_deref().unwrap_or("")))
}

/// Every problem of `gate` as completion evidence. `plan` resolves `log=` pointers.
pub fn gate_problems(gate: &Gate, plan: &LoadedPlan) -> Vec<GateProblem> {
    let mut problems = Vec::new();
    let evidence = gate.evidence.as_deref().unwrap_or("").trim();
    if gate.command.trim().is_empty() {
        problems.push(GateProblem::EmptyCommand);
    }
    if evidence.is_empty() {
        problems.push(GateProblem::EmptyEvidence);
    }
    if !gate.passes {
        problems.push(GateProblem::Fails);
    } else if gate.exit_code != Some(0) {
        problems.push(GateProblem::ExitCode(gate.exit_code));
    }
    if is_invalidated(evidence) {
        problems.push(GateProblem::Invalidated);
    } else if gate.passes {
        if let Some(phrase) = admits_never_ran(evidence) {
            problems.push(GateProblem::AdmitsNeverRan(phrase));
        }
        if let Some(phrase) = zero_selection(evidence) {
            problems.push(GateProblem::ZeroSelection(phrase));
        }
    }
    for log in log_pointers(evidence) {
        match resolve_log(plan, log) {
            LogTarget::Escapes => problems.push(GateProblem::LogEscapes(log.to_owned())),
            LogTarget::Missing => problems.push(GateProblem::LogMissing(log.to_owned())),
            LogTarget::Present => {}
        }
    }
    problems.extend(
        crate::rules::observed::provenance_problems(gate, None, plan)
            .into_iter()
            .map(GateProblem::Provenance),
    );
    problems
}

/// Problems of a task's gate list as evidence for completion: at least one record, and the
/// latest record of every command clean. Each problem names its command.
pub fn completion_problems(gates: &[Gate], plan: &LoadedPlan) -> Vec<(String, GateProblem)> {
    latest_per_command(gates)
        .into_iter()
        .flat_map(|gate| {
            gate_problems(gate, plan)
                .into_iter()
                .map(|p| (gate.command.clone(), p))
        })
        .collect()
}

pub fn is_invalidated(evidence: &str) -> bool {
    evidence
        .trim_start()
        .to_ascii_lowercase()
        .starts_with(INVALIDATED_PREFIX)
}

/// Phrases that also serve as a column of a test tally ("12 passed, 0 not run").
///
/// ```
/// use dwp::rules::evidence::admits_never_ran;
/// assert_eq!(admits_never_ran("12 passed, 0 not run"), None);
/// assert_eq!(admits_never_ran("load scenario never entered"), Some("never entered"));
/// ```
const TALLY_PHRASES: &[&str] = &["not run", "not executed", "unexecuted"];

/// The never-ran phrase the evidence contains, unless it is a tally: a tally phrase right after
/// a bare count that opens the text or follows a separator ("12 passed, 0 not run"). A number
/// that names something ("scenario 2 never entered", "step 4 not run") is no count.
pub fn admits_never_ran(evidence: &str) -> Option<&'static str> {
    let lower = evidence.to_lowercase();
    NEVER_RAN
        .iter()
        .zip(NEVER_RAN_SEARCH.iter())
        .find(|(phrase, search)| {
            occurrences(&lower, search)
                .any(|start| !(TALLY_PHRASES.contains(phrase) && is_tally(&lower[..start])))
        })
        .map(|(phrase, _)| *phrase)
}

/// Whether `before` ends with a count that stands on its own: `0`, `passed, 0`, `(3`.
fn is_tally(before: &str) -> bool {
    let mut words = before.split_whitespace().rev();
    let count = words.next().unwrap_or("");
    let count = count.trim_start_matches(['(', '[', '|', ',', ';']);
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    match words.next() {
        None => true,
        Some(previous) => {
            previous.ends_with([',', ';', '(', '|', ':'])
                || previous.bytes().all(|b| b.is_ascii_digit())
        }
    }
}

/// The zero-selection marker the evidence contains (`ran=0`, `executed=0/0`, `selected=0/12`,
/// `no test ran`, `0 passed`...), as written (lower case).
///
/// ```
/// use dwp::rules::evidence::zero_selection;
/// assert_eq!(zero_selection("collected 0 items").as_deref(), Some("collected 0 items"));
/// assert_eq!(zero_selection("executed=0/0").as_deref(), Some("executed=0"));
/// assert_eq!(zero_selection("10 passed, 0 failed"), None);
/// ```
pub fn zero_selection(evidence: &str) -> Option<String> {
    let lower = evidence.to_lowercase();
    for (phrase, search) in ZERO_SELECTION.iter().zip(ZERO_SELECTION_SEARCH.iter()) {
        for start in occurrences(&lower, search) {
            // "10 passed" contains "0 passed": a digit before the match means another number.
            let digit_before = lower[..start].ends_with(|c: char| c.is_ascii_digit());
            if !digit_before {
                return Some((*phrase).to_owned());
            }
        }
    }
    [&*ZERO_COUNT, &*NO_TEST]
        .into_iter()
        .find_map(|pattern| pattern.find(&lower))
        .map(|found| {
            found
                .as_str()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
}

/// Where `search`'s phrase starts in `haystack` as whole words (non-overlapping, in order).
fn occurrences<'a>(haystack: &'a str, search: &'a Finder<'_>) -> impl Iterator<Item = usize> + 'a {
    let len = search.needle().len();
    search.find_iter(haystack.as_bytes()).filter(move |&i| {
        // Whole words only: "annotated" must not match "not".
        let before_ok = !haystack[..i].ends_with(|c: char| c.is_alphabetic());
        let after_ok = !haystack[i + len..].starts_with(|c: char| c.is_alphabetic());
        before_ok && after_ok
    })
}

/// The `log=PATH` pointers in an evidence string.
pub fn log_pointers(evidence: &str) -> impl Iterator<Item = &str> {
    evidence.split_whitespace().filter_map(|word| {
        let path = word.strip_prefix("log=")?;
        let path = path.trim_end_matches([',', ';', ')']);
        (!path.is_empty()).then_some(path)
    })
}

enum LogTarget {
    Present,
    Missing,
    Escapes,
}

fn resolve_log(plan: &LoadedPlan, log: &str) -> LogTarget {
    let relative = Path::new(log);
    let lexically_inside = !relative.is_absolute()
        && relative
            .components()
            .try_fold(0usize, |depth, c| match c {
                Component::ParentDir => depth.checked_sub(1),
                Component::Normal(_) => Some(depth + 1),
                _ => Some(depth),
            })
            .is_some();
    if !lexically_inside {
        return LogTarget::Escapes;
    }
    match plan.place(&plan.dir().join(relative)) {
        crate::store::Place::File => LogTarget::Present,
        crate::store::Place::Outside => LogTarget::Escapes,
        crate::store::Place::Missing | crate::store::Place::Other => LogTarget::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(command: &str, passes: bool, exit: Option<i64>, evidence: &str) -> Gate {
        Gate {
            command: command.into(),
            passes,
            exit_code: exit,
            last_run: "2026-06-09T14:00:00Z".into(),
            evidence: Some(evidence.into()),
        }
    }

    #[test]
    fn honest_tallies_are_not_admissions() {
        assert_eq!(admits_never_ran("12 passed, 0 not run"), None);
        assert_eq!(admits_never_ran("42 passed, 3 not run"), None);
        assert_eq!(admits_never_ran("annotated 12 files"), None);
        assert_eq!(admits_never_ran("3 not run"), None);
        assert_eq!(
            admits_never_ran("scenario 2 never entered"),
            Some("never entered")
        );
        assert_eq!(admits_never_ran("step 4 not run"), Some("not run"));
        assert_eq!(
            admits_never_ran("step 4 cannot be measured"),
            Some("cannot be measured")
        );
        assert_eq!(
            admits_never_ran("scenario never entered"),
            Some("never entered")
        );
        assert_eq!(
            admits_never_ran("Load test: NOT RUN (no cluster)"),
            Some("not run")
        );
        assert_eq!(
            admits_never_ran("p99 cannot be measured here"),
            Some("cannot be measured")
        );
        assert_eq!(
            admits_never_ran("structurally impossible to exercise"),
            Some("structurally impossible")
        );
    }

    #[test]
    fn zero_selection_is_caught_without_flagging_real_counts() {
        assert_eq!(zero_selection("ran=0 failed=0").as_deref(), Some("ran=0"));
        assert_eq!(
            zero_selection("collected 0 items").as_deref(),
            Some("collected 0 items")
        );
        assert_eq!(
            zero_selection("selected=0/120").as_deref(),
            Some("selected=0")
        );
        assert_eq!(
            zero_selection("0 passed, 0 failed").as_deref(),
            Some("0 passed")
        );
        assert_eq!(zero_selection("10 passed, 0 failed"), None);
        assert_eq!(zero_selection("ran=05"), None);
        assert_eq!(zero_selection("selected=10/120"), None);
        assert_eq!(zero_selection("42 passed"), None);
    }

    /// The counts the public reference tooling reads as a run that selected nothing
    /// (`(ran|selected|executed) = 0`, `no test(s) ran|found|collected`), read the same way, and
    /// the honest tallies around them left alone.
    #[test]
    fn zero_selection_reads_counts_as_the_reference_does() {
        for (evidence, marker) in [
            ("executed=0/0", "executed=0"),
            ("executed=0", "executed=0"),
            ("ran = 0", "ran = 0"),
            ("no test ran", "no test ran"),
            ("No  tests\tfound", "no tests found"),
            ("tests: Executed = 0 of 0", "executed = 0"),
            ("ran=0, failed=0", "ran=0"),
        ] {
            assert_eq!(
                zero_selection(evidence).as_deref(),
                Some(marker),
                "{evidence}"
            );
        }
        for honest in [
            "ran=12 failed=0",
            "executed=3/3",
            "42 passed, 0 failed",
            "failed = 0",
            "5 passed, deselected=0",
            "no regressions found",
        ] {
            assert_eq!(zero_selection(honest), None, "{honest}");
        }
    }

    #[test]
    fn only_the_latest_record_per_command_counts() {
        let gates = [
            gate("test", false, Some(1), "1 failed"),
            gate("lint", true, Some(0), "clean"),
            gate("test", true, Some(0), "12 passed"),
        ];
        let latest = latest_per_command(&gates);
        assert_eq!(latest.len(), 2);
        assert!(latest.iter().all(|g| g.passes));
        let dir = tempfile::tempdir().unwrap();
        assert!(completion_problems(&gates, &LoadedPlan::open(dir.path())).is_empty());
        // A retry supersedes only its own command: a later failing lint is not masked by test.
        let mut worse = gates.to_vec();
        worse.push(gate("lint", false, Some(2), "3 warnings"));
        let problems = completion_problems(&worse, &LoadedPlan::open(dir.path()));
        assert_eq!(problems, vec![("lint".to_owned(), GateProblem::Fails)]);
    }

    #[test]
    fn invalidated_evidence_never_passes() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(
            "t",
            true,
            Some(0),
            "invalidated by refine 2026-06-10: 12 passed",
        );
        assert_eq!(
            gate_problems(&g, &LoadedPlan::open(dir.path())),
            vec![GateProblem::Invalidated]
        );
    }

    #[test]
    fn passes_needs_exit_code_zero_and_evidence() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            gate_problems(
                &gate("t", true, Some(3), "ok"),
                &LoadedPlan::open(dir.path())
            ),
            vec![GateProblem::ExitCode(Some(3))]
        );
        assert_eq!(
            gate_problems(&gate("t", true, None, "ok"), &LoadedPlan::open(dir.path())),
            vec![GateProblem::ExitCode(None)]
        );
        assert_eq!(
            gate_problems(
                &gate(" ", true, Some(0), " "),
                &LoadedPlan::open(dir.path())
            ),
            vec![GateProblem::EmptyCommand, GateProblem::EmptyEvidence]
        );
    }

    #[test]
    fn log_pointers_must_stay_inside_the_plan_and_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("analysis_results")).unwrap();
        std::fs::write(dir.path().join("analysis_results/test.log"), "ok").unwrap();
        let ok = gate(
            "t",
            true,
            Some(0),
            "12 passed log=analysis_results/test.log",
        );
        assert!(gate_problems(&ok, &LoadedPlan::open(dir.path())).is_empty());
        let missing = gate(
            "t",
            true,
            Some(0),
            "12 passed log=analysis_results/nope.log",
        );
        assert_eq!(
            gate_problems(&missing, &LoadedPlan::open(dir.path())),
            vec![GateProblem::LogMissing("analysis_results/nope.log".into())]
        );
        for escaping in ["log=../x.log", "log=/etc/passwd", "log=a/../../x"] {
            let g = gate("t", true, Some(0), &format!("12 passed {escaping}"));
            let problems = gate_problems(&g, &LoadedPlan::open(dir.path()));
            assert!(
                matches!(problems.as_slice(), [GateProblem::LogEscapes(_)]),
                "{escaping}: {problems:?}"
            );
        }
    }

    #[test]
    fn a_log_reached_through_a_symlinked_folder_leaving_the_plan_escapes() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("test.log"), "12 passed").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("analysis_results")).unwrap();
        let g = gate(
            "t",
            true,
            Some(0),
            "12 passed log=analysis_results/test.log",
        );
        assert_eq!(
            gate_problems(&g, &LoadedPlan::open(dir.path())),
            vec![GateProblem::LogEscapes("analysis_results/test.log".into())]
        );
    }
}
