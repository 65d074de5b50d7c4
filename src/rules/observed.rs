//! Observed gate evidence: a gate record dwp wrote after running the command itself
//! (`dwp run`), as opposed to one an agent asserted (`dwp update --gate`).
//!
//! One module holds every rule both sides need, so that the writer and the checker cannot drift:
//! - the log dwp keeps of a run (`analysis_results/gates/task-N-<slug>-<time>.log`): a short
//!   header (task, command, when it finished, how it ended, how much output was kept), then the
//!   output, at most [`LOG_BOUND`] bytes, the tail kept when there was more;
//! - the summary dwp extracts from the output ([`summary`]): the totals of the test runners it
//!   recognises (cargo test, pytest, jest/vitest, go test, rspec, `N passed, N failed`), else
//!   the last non-empty line;
//! - the evidence string of an observed gate ([`evidence`]):
//!   `<summary> (observed by dwp: <ending>; log=<path> sha256=<hex>)`, the provenance in the
//!   schema's own `evidence` field (the public schemas are closed: no field can be added);
//! - whether the run passes ([`passes`]): exit 0, and a summary that does not show a run that
//!   selected nothing;
//! - the provenance check ([`provenance_problems`]) `dwp verify` and the updater run on every
//!   record carrying the mark: the log is inside the plan, hashes to the recorded sha256, and
//!   its command, ending and summary are the record's.

use crate::plan::LoadedPlan;
use crate::plan::model::Gate;
use regex::Regex;
use std::sync::OnceLock;

/// Where `dwp run` keeps its logs, relative to the plan folder.
pub const GATES_DIR: &str = "analysis_results/gates";

/// The most output a log keeps: the tail is where a test runner's verdict is.
pub const LOG_BOUND: usize = 4 * 1024 * 1024;

/// The first line of every log dwp keeps of a run.
const LOG_MAGIC: &str = "dwp gate log 1";
/// The line that ends the header; the output follows it.
const LOG_SEPARATOR: &str = "----";
/// What opens the provenance part of an observed gate's evidence.
pub const MARK: &str = " (observed by dwp: ";

/// The schema's limit on `evidence` (and on `command`).
const MAX_FIELD: usize = 500;
/// The longest summary kept, in characters.
const MAX_SUMMARY: usize = 200;

/// How a run ended, as the log and the evidence say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Exited(i64),
    TimedOut(u64),
    Signalled(i32),
    NotStarted,
}

impl Ending {
    /// The exit code a gate records: only a real exit status (dwp invents none).
    pub fn exit_code(&self) -> Option<i64> {
        match self {
            Ending::Exited(code) => Some(*code),
            _ => None,
        }
    }

    /// An ending as [`Display`](std::fmt::Display) writes it (`exit 0`, `timed out after 5 s`,
    /// `killed by signal 9`, `not started`).
    pub fn parse(text: &str) -> Option<Ending> {
        if let Some(code) = text.strip_prefix("exit ") {
            return code.parse().ok().map(Ending::Exited);
        }
        if let Some(rest) = text.strip_prefix("timed out after ") {
            return rest
                .strip_suffix(" s")
                .and_then(|s| s.parse().ok())
                .map(Ending::TimedOut);
        }
        if let Some(signal) = text.strip_prefix("killed by signal ") {
            return signal.parse().ok().map(Ending::Signalled);
        }
        (text == "not started").then_some(Ending::NotStarted)
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Exited(code) => write!(f, "exit {code}"),
            Ending::TimedOut(seconds) => write!(f, "timed out after {seconds} s"),
            Ending::Signalled(signal) => write!(f, "killed by signal {signal}"),
            Ending::NotStarted => write!(f, "not started"),
        }
    }
}

/// The header of a log: what the run was and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHeader {
    pub task: u64,
    pub command: String,
    pub finished: String,
    pub ending: Ending,
    /// Every byte the command printed.
    pub total: u64,
}

/// The bytes of a log: the header, then the last [`LOG_BOUND`] bytes of `output` (whose full
/// length is `header.total`), the header saying how many were left out.
pub fn log_bytes(header: &LogHeader, tail: &[u8]) -> Vec<u8> {
    let tail = &tail[tail.len().saturating_sub(LOG_BOUND)..];
    let kept = tail.len() as u64;
    let output = if kept >= header.total {
        format!("output: {} bytes, all kept", header.total)
    } else {
        format!(
            "output: {} bytes, the last {kept} kept (the first {} left out)",
            header.total,
            header.total - kept
        )
    };
    let mut bytes = format!(
        "{LOG_MAGIC}\ntask: {}\ncommand: {}\nfinished: {}\nended: {}\n{output}\n{LOG_SEPARATOR}\n",
        header.task,
        one_line(&header.command),
        header.finished,
        header.ending
    )
    .into_bytes();
    bytes.extend_from_slice(tail);
    bytes
}

/// A run dwp observed, as its log keeps it and its gate records it: the one place the log's
/// bytes, the summary and the verdict are derived from what ran (`dwp run` and `dwp update
/// --gates-from` both record through it).
#[derive(Debug, Clone)]
pub struct Observation {
    pub header: LogHeader,
    /// The log: the header, then the output's tail (at most [`LOG_BOUND`] bytes).
    pub bytes: Vec<u8>,
    /// The summary the kept output gives (`None`: it printed nothing).
    pub summary: Option<String>,
    pub passes: bool,
}

/// The log, summary and verdict of a run whose header is `header` and whose output ends with
/// `tail` (the summary is read from what the log keeps, as `dwp verify` reads it back).
pub fn observe(header: LogHeader, tail: &[u8]) -> Observation {
    let bytes = log_bytes(&header, tail);
    let summary = summary(
        parse_log(&bytes)
            .map(|(_, output)| output)
            .unwrap_or_default(),
    );
    let passes = passes(&header.ending, summary.as_deref());
    Observation {
        header,
        bytes,
        summary,
        passes,
    }
}

impl Observation {
    /// The gate record of this run once its log is kept at `log` (relative to the plan folder)
    /// with `sha256`: the observed-gate shape.
    pub fn gate(&self, log: &str, sha256: &str) -> Gate {
        Gate {
            command: self.header.command.clone(),
            passes: self.passes,
            exit_code: self.header.ending.exit_code(),
            last_run: self.header.finished.clone(),
            evidence: Some(evidence(
                self.summary.as_deref(),
                &self.header.ending,
                log,
                sha256,
            )),
        }
    }

    /// The command exited 0 but its output shows it selected or ran no test.
    pub fn ran_no_tests(&self) -> bool {
        self.header.ending == Ending::Exited(0) && !self.passes
    }
}

/// A log read back: its header and its output, or what makes it no log of dwp's.
pub fn parse_log(bytes: &[u8]) -> Result<(LogHeader, &[u8]), String> {
    let mut rest = bytes;
    let mut line = || -> Result<&str, String> {
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("its header is cut short")?;
        let text = std::str::from_utf8(&rest[..end]).map_err(|_| "its header is not UTF-8")?;
        rest = &rest[end + 1..];
        Ok(text)
    };
    if line()? != LOG_MAGIC {
        return Err(format!("it does not open with `{LOG_MAGIC}`"));
    }
    let mut field = |name: &str| -> Result<String, String> {
        let text = line()?;
        text.strip_prefix(name)
            .and_then(|t| t.strip_prefix(": "))
            .map(str::to_owned)
            .ok_or_else(|| format!("its header has no `{name}:` line where one belongs"))
    };
    let task = field("task")?;
    let command = field("command")?;
    let finished = field("finished")?;
    let ended = field("ended")?;
    let output = field("output")?;
    if line()? != LOG_SEPARATOR {
        return Err(format!("its header does not end with `{LOG_SEPARATOR}`"));
    }
    let header = LogHeader {
        task: task
            .parse()
            .map_err(|_| format!("task `{task}` is no id"))?,
        command,
        finished,
        ending: Ending::parse(&ended).ok_or_else(|| format!("ended `{ended}` is no ending"))?,
        total: output
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("output `{output}` is no byte count"))?,
    };
    Ok((header, rest))
}

/// The one-line summary of a run's output: the test runners' totals dwp recognises, else the
/// last non-empty line; at most 200 characters, control characters left out. `None`: it printed
/// nothing.
///
/// ```
/// use dwp::rules::observed::summary;
/// let cargo = b"running 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored\n\
///               running 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored\n";
/// assert_eq!(summary(cargo).as_deref(), Some("cargo test: 2 passed; 0 failed; 0 ignored (2 test binaries)"));
/// assert_eq!(summary(b"==== 3 passed, 1 failed in 0.20s ====\n").as_deref(), Some("pytest: 3 passed, 1 failed"));
/// assert_eq!(summary(b"built\nall good\n\n").as_deref(), Some("all good"));
/// let unittest = b"..\n------\nRan 2 tests in 0.001s\n\nOK\n";
/// assert_eq!(summary(unittest).as_deref(), Some("unittest: ran 2 tests, OK"));
/// ```
pub fn summary(output: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let found = cargo(&lines)
        .or_else(|| go(&lines))
        .or_else(|| pytest(&lines))
        .or_else(|| unittest(&lines))
        .or_else(|| jest(&lines))
        .or_else(|| rspec(&lines))
        .or_else(|| tally(&lines))
        .or_else(|| {
            lines
                .iter()
                .rev()
                .find(|l| !l.is_empty())
                .map(|l| l.to_string())
        })?;
    Some(clip(&found, MAX_SUMMARY))
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

/// cargo test: every `test result:` line summed (a workspace prints one per test binary).
fn cargo(lines: &[&str]) -> Option<String> {
    static RESULT: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &RESULT,
        r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored",
    );
    let (mut passed, mut failed, mut ignored, mut binaries) = (0u64, 0u64, 0u64, 0u64);
    for line in lines {
        if let Some(c) = re.captures(line) {
            let n = |i: usize| c[i].parse::<u64>().unwrap_or(0);
            passed += n(1);
            failed += n(2);
            ignored += n(3);
            binaries += 1;
        }
    }
    (binaries > 0).then(|| {
        let plural = if binaries == 1 { "binary" } else { "binaries" };
        format!(
            "cargo test: {passed} passed; {failed} failed; {ignored} ignored ({binaries} test {plural})"
        )
    })
}

/// Python's unittest: `Ran N tests in T s`, then its verdict (`OK`, `OK (skipped=1)`,
/// `FAILED (failures=1)`, `NO TESTS RAN`) on the next line that says anything. Its last line
/// alone (`OK`) would hide that it ran no test.
fn unittest(lines: &[&str]) -> Option<String> {
    static RAN: OnceLock<Regex> = OnceLock::new();
    let re = regex(&RAN, r"^Ran (\d+) tests? in [0-9.]+s$");
    let (at, count) = lines
        .iter()
        .enumerate()
        .rev()
        .find_map(|(at, line)| Some((at, re.captures(line)?[1].to_owned())))?;
    let verdict = lines[at + 1..].iter().find(|l| !l.is_empty()).copied();
    let noun = if count == "1" { "test" } else { "tests" };
    Some(match verdict {
        Some(verdict) => format!("unittest: ran {count} {noun}, {verdict}"),
        None => format!("unittest: ran {count} {noun}"),
    })
}

/// go test: one line per package, `ok`, `FAIL` or `?` (no test files); `[no tests to run]`.
fn go(lines: &[&str]) -> Option<String> {
    static PACKAGE: OnceLock<Regex> = OnceLock::new();
    let re = regex(&PACKAGE, r"^(ok|FAIL|\?)\s+\S+(\s+(.*))?$");
    let (mut ok, mut failed, mut empty, mut any) = (0u64, 0u64, 0u64, false);
    for line in lines {
        let Some(c) = re.captures(line) else {
            continue;
        };
        any = true;
        let rest = c.get(3).map_or("", |m| m.as_str());
        match &c[1] {
            "?" => empty += 1,
            _ if rest.contains("[no tests to run]") => empty += 1,
            "ok" => ok += 1,
            _ => failed += 1,
        }
    }
    if !any {
        return None;
    }
    let mut text = format!("go test: {ok} packages ok, {failed} failed");
    if empty > 0 {
        text.push_str(&format!(", {empty} without tests"));
    }
    if ok + failed == 0 {
        text.push_str(": no tests ran");
    }
    Some(text)
}

/// pytest: the last `==== ... in 0.12s ====` line, without the rules and the time.
fn pytest(lines: &[&str]) -> Option<String> {
    static FINAL: OnceLock<Regex> = OnceLock::new();
    let re = regex(&FINAL, r"^=+ (.*?)(?: in [0-9.]+s(?: \([^)]*\))?)? =+$");
    lines.iter().rev().find_map(|line| {
        let inner = re.captures(line)?.get(1)?.as_str();
        let lower = inner.to_lowercase();
        [
            "passed",
            "failed",
            "error",
            "no tests ran",
            "deselected",
            "skipped",
        ]
        .iter()
        .any(|w| lower.contains(w))
        .then(|| format!("pytest: {inner}"))
    })
}

/// jest (`Tests:       1 failed, 41 passed, 42 total`) and vitest (`Tests  41 passed (41)`);
/// `No tests found` when that is all there is.
fn jest(lines: &[&str]) -> Option<String> {
    static TESTS: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &TESTS,
        r"^Tests:?\s+(.*\d+ (?:passed|failed|total|skipped).*)$",
    );
    lines
        .iter()
        .rev()
        .find_map(|line| Some(format!("tests: {}", re.captures(line)?.get(1)?.as_str())))
        .or_else(|| {
            lines
                .iter()
                .find(|l| l.to_lowercase().starts_with("no tests found"))
                .map(|l| l.to_string())
        })
}

/// rspec: `42 examples, 0 failures[, 1 pending]`.
fn rspec(lines: &[&str]) -> Option<String> {
    static EXAMPLES: OnceLock<Regex> = OnceLock::new();
    let re = regex(&EXAMPLES, r"^\d+ examples?, \d+ failures?(, \d+ pending)?$");
    lines
        .iter()
        .rev()
        .find(|line| re.is_match(line))
        .map(|line| format!("rspec: {line}"))
}

/// Any other runner's tally: the last line saying `N passed` or `N failed`.
fn tally(lines: &[&str]) -> Option<String> {
    static COUNT: OnceLock<Regex> = OnceLock::new();
    let re = regex(&COUNT, r"(?i)\b\d+ (passed|failed)\b");
    lines
        .iter()
        .rev()
        .find(|line| re.is_match(line))
        .map(|line| line.to_string())
}

/// `text` without control characters, at most `max` characters (an ellipsis when cut).
fn clip(text: &str, max: usize) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() <= max {
        return clean;
    }
    let mut cut: String = clean.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Whether a run passes: it exited 0, and its summary does not show it selected or ran
/// nothing ([`crate::rules::evidence::zero_selection`], the phrases the evidence rules know). A
/// silent success passes (`cargo fmt --check` prints nothing when all is well).
pub fn passes(ending: &Ending, summary: Option<&str>) -> bool {
    *ending == Ending::Exited(0)
        && summary.is_none_or(|s| crate::rules::evidence::zero_selection(s).is_none())
}

/// The summary an observed gate records for output that printed nothing.
pub const NO_OUTPUT: &str = "(no output)";

/// The evidence string of an observed gate. The summary is shortened so that the whole stays
/// within the schema's 500 characters.
pub fn evidence(summary: Option<&str>, ending: &Ending, log: &str, sha256: &str) -> String {
    let tail = format!("{MARK}{ending}; log={log} sha256={sha256})");
    let room = MAX_FIELD.saturating_sub(tail.chars().count()).max(1);
    format!("{}{tail}", clip(summary.unwrap_or(NO_OUTPUT), room))
}

/// The provenance an observed gate's evidence carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark<'a> {
    /// The summary, as recorded (after an `invalidated by refine` prefix, if any).
    pub summary: &'a str,
    pub ending: Ending,
    pub log: &'a str,
    pub sha256: &'a str,
}

/// The provenance mark of `evidence`, when it carries one: the record says dwp observed it.
pub fn mark(evidence: &str) -> Option<Mark<'_>> {
    let at = evidence.rfind(MARK)?;
    let body = evidence[at + MARK.len()..].strip_suffix(')')?;
    let (ending, pointers) = body.split_once("; log=")?;
    let (log, sha256) = pointers.split_once(" sha256=")?;
    let hex = sha256.len() == 64
        && sha256
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !hex || log.is_empty() || log.contains(char::is_whitespace) {
        return None;
    }
    let mut summary = &evidence[..at];
    if crate::rules::evidence::is_invalidated(summary)
        && let Some((_, rest)) = summary.split_once(": ")
    {
        summary = rest;
    }
    Some(Mark {
        summary,
        ending: Ending::parse(ending)?,
        log,
        sha256,
    })
}

/// `dwp run PLAN --task N -- COMMAND`, the line that records `command` as observed evidence of
/// task `task` of the plan named `plan` (a shell word), its words quoted as `dwp run` records
/// them; `None` for a command only a shell runs as written (a pipe, a variable), which no argv
/// line repeats. `dwp next`, the updater's refusals and verify's hints print this one line.
pub fn run_line(plan: &str, task: u64, command: &str) -> Option<String> {
    let argv = crate::plan::markdown::command_argv(command)?;
    Some(format!(
        "dwp run {plan} --task {task} -- {}",
        crate::term::display_argv(&argv)
    ))
}

/// Whether a gate record says dwp observed it (its evidence carries the mark).
pub fn is_observed(gate: &Gate) -> bool {
    gate.evidence.as_deref().and_then(mark).is_some()
}

/// What a log says against the observed gate that points at it: empty when the log backs the
/// record (inside the plan, the recorded sha256, the record's command, ending, summary and
/// verdict, and what `dwp run` writes consistently: the log where dwp keeps it, named after its
/// task and time, of the record's task (`task`, when the caller knows it) and finished when the
/// record says it ran). Nothing for a record without the mark: an asserted record has no log.
pub fn provenance_problems(gate: &Gate, task: Option<u64>, plan: &LoadedPlan) -> Vec<String> {
    let Some(recorded) = gate.evidence.as_deref().and_then(mark) else {
        return Vec::new();
    };
    let path = plan.dir().join(recorded.log);
    let read = plan.read(&path);
    let bytes = match &*read {
        Ok(bytes) => bytes,
        // A missing or escaping log is the evidence rules' `log=` finding already.
        Err(crate::store::ReadFailure::Missing | crate::store::ReadFailure::Escapes(_)) => {
            return Vec::new();
        }
        Err(failure) => {
            return vec![format!(
                "its log `{}` cannot be read: {failure}",
                recorded.log
            )];
        }
    };
    let actual = crate::store::sha256_hex(bytes);
    if actual != recorded.sha256 {
        return vec![format!(
            "its log `{}` has sha256 {actual}, not the {} recorded: the log changed after the run",
            recorded.log, recorded.sha256
        )];
    }
    let (header, output) = match parse_log(bytes) {
        Ok(parsed) => parsed,
        Err(why) => {
            return vec![format!(
                "its log `{}` is no dwp run log: {why}",
                recorded.log
            )];
        }
    };
    let mut problems = origin_problems(gate, task, &header, recorded.log);
    if !is_as_written(&header, output, bytes) {
        problems.push(format!(
            "its log `{}` is not as dwp writes one: its header says {} bytes of output, and it keeps {}",
            recorded.log,
            header.total,
            output.len()
        ));
    }
    if header.command != gate.command {
        problems.push(format!(
            "its log `{}` ran `{}`, not the recorded command",
            recorded.log, header.command
        ));
    }
    if header.ending != recorded.ending || header.ending.exit_code() != gate.exit_code {
        problems.push(format!(
            "its log `{}` says {}, the record exit code {}",
            recorded.log,
            header.ending,
            gate.exit_code
                .map_or_else(|| "none".to_owned(), |c| c.to_string())
        ));
    }
    let found = summary(output);
    let expected = evidence(
        found.as_deref(),
        &header.ending,
        recorded.log,
        recorded.sha256,
    );
    let recorded_summary = recorded.summary;
    if mark(&expected).map(|m| m.summary) != Some(recorded_summary) {
        problems.push(format!(
            "its summary `{recorded_summary}` is not what its log `{}` shows (`{}`)",
            recorded.log,
            found.as_deref().unwrap_or(NO_OUTPUT)
        ));
    }
    if passes(&header.ending, found.as_deref()) != gate.passes {
        problems.push(format!(
            "it records passes: {}, but its log `{}` shows a run that {}",
            gate.passes,
            recorded.log,
            if gate.passes {
                "did not pass"
            } else {
                "passed"
            }
        ));
    }
    problems
}

/// Where `dwp run` would have put the log `header` heads and what it would have recorded with
/// it, against the record (`task`: the record's, when known). A hand-written record that reuses
/// another run's log, or a log written where dwp never writes one, disagrees here; one written
/// consistently does not (docs/DECISIONS.md, "Observed gate evidence").
fn origin_problems(gate: &Gate, task: Option<u64>, header: &LogHeader, log: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(task) = task.filter(|t| *t != header.task) {
        problems.push(format!(
            "its log `{log}` is task {}'s, not task {task}'s",
            header.task
        ));
    }
    let same_time = match (
        crate::clock::parse_rfc3339(&header.finished),
        crate::clock::parse_rfc3339(&gate.last_run),
    ) {
        (Some(finished), Some(ran)) => finished == ran,
        _ => header.finished == gate.last_run,
    };
    if !same_time {
        problems.push(format!(
            "its log `{log}` finished {}, and the record says it ran {}: dwp records the time its log says",
            header.finished, gate.last_run
        ));
    }
    if !is_log_name(log, header.task, &header.finished) {
        problems.push(format!(
            "its log `{log}` is not where dwp keeps its logs ({GATES_DIR}/task-{}-COMMAND-{}.log)",
            header.task,
            stamp(&header.finished)
        ));
    }
    problems
}

/// Whether `bytes` are the log [`log_bytes`] writes for `header` and `output`: the header's
/// byte count agrees with the output kept (all of it, or the last [`LOG_BOUND`] bytes of more),
/// every line as dwp spells it.
fn is_as_written(header: &LogHeader, output: &[u8], bytes: &[u8]) -> bool {
    let kept = output.len() as u64;
    let counted = kept == header.total || (kept == LOG_BOUND as u64 && header.total > kept);
    counted && log_bytes(header, output) == bytes
}

/// Whether `log` is a name [`log_name`] gives a run of `task` that finished at `finished`
/// (with the `-2`, `-3`... of a second run in the same second).
fn is_log_name(log: &str, task: u64, finished: &str) -> bool {
    let Some(name) = log
        .strip_prefix(GATES_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|name| !name.contains('/'))
        .and_then(|name| name.strip_suffix(".log"))
    else {
        return false;
    };
    let stamp = format!("-{}", stamp(finished));
    let name = match name.rsplit_once('-') {
        Some((head, n)) if n.parse::<u32>().is_ok_and(|n| n >= 2) && head.ends_with(&stamp) => head,
        _ => name,
    };
    name.starts_with(&format!("task-{task}-")) && name.ends_with(&stamp)
}

/// The task a log's file name (`task-N-...`) is of.
pub fn task_of_log_name(name: &str) -> Option<u64> {
    name.strip_prefix("task-")?.split('-').next()?.parse().ok()
}

/// A finish time as a log's name carries it: its letters and digits.
fn stamp(finished: &str) -> String {
    finished
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect()
}

/// The name of a new log: `task-N-<slug>-<YYYYMMDDTHHMMSSZ>.log`, the slug from the command's
/// first words (lower-case letters, digits and `-`, at most 40 characters).
pub fn log_name(task: u64, argv: &[String], finished: &str) -> String {
    let mut slug = String::new();
    for word in argv.iter().take(3) {
        let base = word.rsplit('/').next().unwrap_or(word);
        for c in base.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() {
                slug.push(c);
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let mut slug: String = slug.trim_matches('-').chars().take(40).collect();
    slug = slug.trim_end_matches('-').to_owned();
    if slug.is_empty() {
        slug.push_str("command");
    }
    format!("task-{task}-{slug}-{}.log", stamp(finished))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(ending: Ending, total: u64) -> LogHeader {
        LogHeader {
            task: 3,
            command: "cargo test".into(),
            finished: "2026-06-09T14:00:00Z".into(),
            ending,
            total,
        }
    }

    #[test]
    fn a_log_reads_back_as_written() {
        let bytes = log_bytes(&header(Ending::Exited(0), 6), b"hello\n");
        let (read, output) = parse_log(&bytes).unwrap();
        assert_eq!(read, header(Ending::Exited(0), 6));
        assert_eq!(output, b"hello\n");
        for ending in [
            Ending::TimedOut(5),
            Ending::Signalled(9),
            Ending::NotStarted,
        ] {
            let bytes = log_bytes(&header(ending.clone(), 0), b"");
            assert_eq!(parse_log(&bytes).unwrap().0.ending, ending);
        }
        assert!(parse_log(b"hello\n").is_err());
    }

    #[test]
    fn a_log_keeps_the_tail_and_says_so() {
        let output = vec![b'x'; LOG_BOUND + 10];
        let bytes = log_bytes(&header(Ending::Exited(0), output.len() as u64), &output);
        let text = String::from_utf8_lossy(&bytes[..200]);
        assert!(text.contains("the first 10 left out"), "{text}");
        assert_eq!(parse_log(&bytes).unwrap().1.len(), LOG_BOUND);
    }

    #[test]
    fn test_runner_summaries_are_recognised() {
        let s = |text: &str| summary(text.as_bytes()).unwrap();
        assert_eq!(
            s("ok  \tex/a\t0.01s\nFAIL\tex/b\t0.02s\n?   \tex/c\t[no test files]\n"),
            "go test: 1 packages ok, 1 failed, 1 without tests"
        );
        assert_eq!(
            s("?   \tex/c\t[no test files]\n"),
            "go test: 0 packages ok, 0 failed, 1 without tests: no tests ran"
        );
        assert_eq!(
            s("Tests:       1 failed, 41 passed, 42 total\nTime: 1s\n"),
            "tests: 1 failed, 41 passed, 42 total"
        );
        assert_eq!(
            s(" Test Files  2 passed (2)\n      Tests  41 passed (41)\n"),
            "tests: 41 passed (41)"
        );
        assert_eq!(
            s("Finished in 0.1s\n42 examples, 0 failures\n"),
            "rspec: 42 examples, 0 failures"
        );
        assert_eq!(
            s("collected 0 items\n===== no tests ran in 0.01s =====\n"),
            "pytest: no tests ran"
        );
        assert_eq!(
            s("suite: 12 passed, 0 failed\nbye\n"),
            "suite: 12 passed, 0 failed"
        );
        assert_eq!(summary(b"\n \n"), None);
    }

    #[test]
    fn a_run_that_selected_nothing_does_not_pass() {
        let zero = summary(b"running 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored\n");
        assert!(!passes(&Ending::Exited(0), zero.as_deref()));
        assert!(!passes(&Ending::Exited(0), Some("pytest: no tests ran")));
        assert!(!passes(
            &Ending::Exited(0),
            Some("rspec: 0 examples, 0 failures")
        ));
        assert!(passes(
            &Ending::Exited(0),
            Some("cargo test: 3 passed; 0 failed")
        ));
        assert!(!passes(
            &Ending::Exited(1),
            Some("cargo test: 3 passed; 0 failed")
        ));
    }

    #[test]
    fn the_evidence_mark_reads_back_and_fits_the_schema() {
        let sha = "a".repeat(64);
        let long = "x".repeat(900);
        let text = evidence(
            Some(&long),
            &Ending::Exited(0),
            "analysis_results/gates/t.log",
            &sha,
        );
        assert!(text.chars().count() <= 500);
        let m = mark(&text).unwrap();
        assert_eq!(m.log, "analysis_results/gates/t.log");
        assert_eq!(m.sha256, sha);
        assert_eq!(m.ending, Ending::Exited(0));
        let invalidated = format!("invalidated by refine 2026-06-10: {text}");
        assert_eq!(mark(&invalidated).unwrap().summary, m.summary);
        assert_eq!(mark("42 passed log=analysis_results/x.log"), None);
        // The `log=` pointer is the one the evidence rules already check.
        let pointers: Vec<_> = crate::rules::evidence::log_pointers(&text).collect();
        assert_eq!(pointers, ["analysis_results/gates/t.log"]);
    }

    #[test]
    fn a_log_is_where_dwp_run_puts_it_only_under_its_task_and_time() {
        let at = "2026-06-09T14:00:00Z";
        let name = |n: &str| format!("{GATES_DIR}/{n}");
        assert!(is_log_name(
            &name("task-3-cargo-test-20260609T140000Z.log"),
            3,
            at
        ));
        assert!(is_log_name(
            &name("task-3-cargo-test-20260609T140000Z-2.log"),
            3,
            at
        ));
        assert!(!is_log_name(
            &name("task-4-cargo-test-20260609T140000Z.log"),
            3,
            at
        ));
        assert!(!is_log_name(
            &name("task-3-cargo-test-20260609T140001Z.log"),
            3,
            at
        ));
        assert!(!is_log_name(
            "analysis_results/task-3-x-20260609T140000Z.log",
            3,
            at
        ));
        assert!(!is_log_name(
            &name("sub/task-3-x-20260609T140000Z.log"),
            3,
            at
        ));
        assert_eq!(task_of_log_name("task-12-x-1.log"), Some(12));
        assert_eq!(task_of_log_name("notes.log"), None);
    }

    #[test]
    fn log_names_are_slugs_of_the_command() {
        let argv = ["./scripts/run-tests.sh", "--all", "x y"].map(String::from);
        assert_eq!(
            log_name(3, &argv, "2026-06-09T14:00:00Z"),
            "task-3-run-tests-sh-all-x-y-20260609T140000Z.log"
        );
        assert_eq!(
            log_name(1, &["'".to_owned()], "2026-06-09T14:00:00.123Z"),
            "task-1-command-20260609T140000123Z.log"
        );
    }
}
