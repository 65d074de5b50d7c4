//! One journal event judged on its own: the closed shape of its type in its generation, the
//! envelope, and the trust rules (docs/record-plans.md, "The journal"). The checks are the union
//! of what the public journal-event schemas say (`schemas/journal-event-v6/v7.schema.json`:
//! lengths, patterns, closed objects) and what the public ledger's validator adds (strings that
//! are not blank, the control-pair verdict arithmetic, trust only on evidence), so an event this
//! accepts is accepted by both. Typed checks rather than a schema validator per event: a journal
//! holds thousands.

use crate::plan::record::{Json, Object, RecordGeneration};
use regex::Regex;
use serde_json::Value;
use std::fmt::Display;
use std::sync::LazyLock;

/// What is wrong with one event, split by the finding each part becomes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EventProblems {
    /// Shape and envelope problems (DWP107), in the order found.
    pub invalid: Vec<String>,
    /// `observed` claimed by an actor that cannot execute a check (DWP108).
    pub agent_observed: Option<String>,
}

/// The contract-independent facts an event is judged against.
pub struct Expect<'a> {
    /// The live contract's generation: every event carries its journal URL (rule 29).
    pub generation: Option<RecordGeneration>,
    /// The live contract's plan.
    pub plan: Option<&'a str>,
}

/// The envelope of an event: what is not its payload.
pub const ENVELOPE: [&str; 8] = [
    "schema",
    "type",
    "seq",
    "ts",
    "plan",
    "contract_id",
    "actor",
    "note",
];

/// The event types that carry evidence, and so a trust label.
pub const EVIDENCE_TYPES: [&str; 4] =
    ["gate_run", "observation", "resource_sample", "control_pair"];

/// The v6 catalog of event types; v7 adds `delegation`.
pub const V6_TYPES: [&str; 14] = [
    "task_start",
    "approval",
    "gate_run",
    "observation",
    "adaptation",
    "amendment",
    "intervention",
    "resource_sample",
    "control_pair",
    "selection",
    "refusal",
    "view_render",
    "reconciliation",
    "journal_repair",
];

static TASK_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^T-[a-z0-9]+(-[a-z0-9]+)*$").unwrap());
static CRITERION_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^AC-[a-z0-9]+(-[a-z0-9]+)*$").unwrap());
pub static PLAN_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^PLAN_([0-9]{3,}_)?[a-z0-9]+(_[a-z0-9]+){1,4}$").unwrap());
pub static HEX64: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[0-9a-f]{64}$").unwrap());

/// RFC 3339's digits are ASCII: `\d` would also take `２０２６` (and take a millisecond to compile).
static DATETIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$").unwrap()
});
static LIMIT_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9_]*$").unwrap());
static DELEGATION_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$").unwrap());
static ADDON: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9-]{0,63}$").unwrap());
static DIGEST: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^sha256:[0-9a-f]{64}$").unwrap());

/// The generation a journal URL names.
pub fn journal_generation(url: Option<&str>) -> Option<RecordGeneration> {
    match url? {
        "https://deepworkplan.com/schema/journal-event/v6.json" => Some(RecordGeneration::V6),
        "https://deepworkplan.com/schema/journal-event/v7.json" => Some(RecordGeneration::V7),
        _ => None,
    }
}

/// Judge one event.
pub fn check(event: &Value, expect: &Expect) -> EventProblems {
    let arena = bumpalo::Bump::new();
    check_fields(&Json::from_value(event, &arena), expect)
}

/// Judge one event as the journal holds it ([`check`] of its value).
pub fn check_fields(object: &Json, expect: &Expect) -> EventProblems {
    let mut problems = EventProblems::default();
    if !object.is_object() {
        problems.invalid.push("is not a JSON object".into());
        return problems;
    }
    let mut check = Check {
        object,
        found: &mut problems.invalid,
    };
    let url = object.get("schema").and_then(Json::as_str);
    let Some(generation) = journal_generation(url) else {
        check.found.push(format!(
            "`schema` {} is no journal-event URL of a record generation (v6, v7)",
            shown(object.get("schema"))
        ));
        return problems;
    };
    if let Some(live) = expect.generation.filter(|live| *live != generation) {
        check.found.push(format!(
            "is a {} event under a {} contract: generations never mix (rule 29)",
            generation.label(),
            live.label()
        ));
        return problems;
    }
    let kind = object.get("type").and_then(Json::as_str).unwrap_or("");
    let known =
        V6_TYPES.contains(&kind) || (generation == RecordGeneration::V7 && kind == "delegation");
    if !known {
        check.found.push(format!(
            "`type` {} is not in the {} catalog",
            shown(object.get("type")),
            generation.label()
        ));
        return problems;
    }
    check.envelope(expect);
    check.payload(kind);
    check.trust(kind, &mut problems.agent_observed);
    problems
}

/// A value as the message shows it (strings quoted, long ones cut).
pub fn shown(value: Option<&impl Display>) -> String {
    match value {
        None => "(missing)".into(),
        Some(value) => {
            let text = value.to_string();
            match text.char_indices().nth(60) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        }
    }
}

struct Check<'o, 'f> {
    object: &'o Json<'o>,
    found: &'f mut Vec<String>,
}

impl<'o> Check<'o, '_> {
    fn fail(&mut self, message: impl Into<String>) {
        self.found.push(message.into());
    }

    fn get(&self, key: &str) -> Option<&'o Json<'o>> {
        self.object.get(key)
    }

    fn envelope(&mut self, expect: &Expect) {
        match self.get("seq") {
            Some(seq @ Json::Number(_))
                if !seq.is_f64() && seq.as_i64().is_some_and(|s| s >= 1) => {}
            other => self.fail(format!("`seq` {} is not an integer >= 1", shown(other))),
        }
        if !self
            .get("ts")
            .and_then(Json::as_str)
            .is_some_and(|ts| DATETIME.is_match(ts))
        {
            self.fail("`ts` is not an RFC 3339 timestamp");
        }
        match self.get("plan").and_then(Json::as_str) {
            // A plan name (`PLAN_` and 2 to 5 words) fits the pattern, checked without the regex
            // engine on every event.
            Some(plan) if crate::plan::is_plan_name(plan) || PLAN_ID.is_match(plan) => {
                if let Some(live) = expect.plan.filter(|live| *live != plan) {
                    self.fail(format!("`plan` {plan} is not the contract's plan {live}"));
                }
            }
            _ => self.fail("`plan` is not a PLAN_* identifier"),
        }
        if !self
            .get("contract_id")
            .and_then(Json::as_str)
            // Every event carries a contract id: checked without the regex engine.
            .is_some_and(crate::plan::typed_schema::is_hex64)
        {
            self.fail("`contract_id` is not a 64-character lowercase sha256 digest");
        }
        match self.get("actor").and_then(Json::as_object) {
            Some(actor) => {
                closed(actor, &["kind", "identity"], "actor", self.found);
                let kind = actor.get("kind").and_then(Json::as_str);
                if !matches!(kind, Some("helper" | "agent" | "host_adapter" | "human")) {
                    self.fail("`actor.kind` is not helper, agent, host_adapter or human");
                }
                if !actor
                    .get("identity")
                    .and_then(Json::as_str)
                    .is_some_and(|id| !id.trim().is_empty() && id.chars().count() <= 100)
                {
                    self.fail(
                        "`actor.identity` is not a non-empty string of at most 100 characters",
                    );
                }
            }
            None => self.fail("`actor` is not an object"),
        }
        if let Some(note) = self.get("note")
            && note.as_str().is_none_or(|n| n.chars().count() > 500)
        {
            self.fail("`note` is not a string of at most 500 characters");
        }
    }

    /// The type's own fields: closed, each checked.
    fn payload(&mut self, kind: &str) {
        let own: &[&str] = match kind {
            "task_start" => &["task", "fingerprint"],
            "approval" => &["authority", "mechanism", "plan_digest"],
            "gate_run" => &[
                "command",
                "cwd",
                "env",
                "timeout_seconds",
                "exit_code",
                "trust",
                "evidence_path",
                "criterion",
                "task",
            ],
            "observation" => &["statement", "trust", "evidence_path"],
            "adaptation" => &[
                "kind",
                "trigger_observation",
                "evidence_artifact",
                "hypothesis",
                "action",
                "rationale",
                "affected_tasks",
                "affected_criteria",
                "authority",
                "evidence_invalidated",
                "evidence_preserved",
                "resource_impact",
                "decision",
                "reason",
            ],
            "amendment" => &[
                "original_criterion",
                "observed_finding",
                "disposition",
                "revised_criterion",
                "reason",
                "authority",
                "affected_tasks",
                "evidence_invalidated",
                "evidence_preserved",
            ],
            "intervention" => &["category", "description", "question", "resolution"],
            "resource_sample" => &[
                "source",
                "limit_id",
                "value",
                "unit",
                "trust",
                "evidence_path",
            ],
            "control_pair" => &[
                "criterion",
                "check_artifacts",
                "starting_fingerprint",
                "old_leg",
                "new_leg",
                "verdict",
                "trust",
                "evidence_path",
            ],
            "selection" => &["task", "priority_boost", "aging"],
            "refusal" => &["subject", "stage", "reason", "proposal"],
            "view_render" => &["view", "snapshot_digest", "digests"],
            "reconciliation" => &["trigger", "editor", "authority"],
            "journal_repair" => &["byte_offset", "cause"],
            _ => &[
                "task",
                "delegation_id",
                "transport",
                "via",
                "kind",
                "profile",
                "target",
                "worktree",
                "prompt_digest",
                "state",
                "result_path",
                "result_digest",
            ],
        };
        for key in self.object.as_object().into_iter().flat_map(Object::keys) {
            if !ENVELOPE.contains(&key) && !own.contains(&key) {
                self.fail(format!(
                    "`{key}` is not a field of a {kind} event (closed object)"
                ));
            }
        }
        match kind {
            "task_start" => self.task_start(),
            "approval" => self.approval(),
            "gate_run" => self.gate_run(),
            "observation" => self.text("statement"),
            "adaptation" => self.adaptation(),
            "amendment" => self.amendment(),
            "intervention" => self.intervention(),
            "resource_sample" => self.resource_sample(),
            "control_pair" => self.control_pair(),
            "selection" => self.selection(),
            "refusal" => self.refusal(),
            "view_render" => self.view_render(),
            "reconciliation" => ["trigger", "editor", "authority"]
                .iter()
                .for_each(|k| self.text(k)),
            "journal_repair" => {
                self.integer_at_least("byte_offset", 0);
                self.text("cause");
            }
            _ => self.delegation(),
        }
    }

    /// A required string with something in it.
    fn text(&mut self, key: &str) {
        if !is_filled(self.get(key)) {
            self.fail(format!("`{key}` is not a non-empty string"));
        }
    }

    fn optional_text(&mut self, key: &str) {
        if self.get(key).is_some() {
            self.text(key);
        }
    }

    fn matches(&mut self, key: &str, pattern: &Regex, what: &str) {
        if !self
            .get(key)
            .and_then(Json::as_str)
            .is_some_and(|s| pattern.is_match(s))
        {
            self.fail(format!("`{key}` is not {what}"));
        }
    }

    fn one_of(&mut self, key: &str, allowed: &[&str]) {
        if !self
            .get(key)
            .and_then(Json::as_str)
            .is_some_and(|s| allowed.contains(&s))
        {
            self.fail(format!("`{key}` is not one of {}", allowed.join(", ")));
        }
    }

    fn integer_at_least(&mut self, key: &str, floor: i64) {
        if !self.get(key).is_some_and(|v| is_integer_at_least(v, floor)) {
            self.fail(format!("`{key}` is not an integer >= {floor}"));
        }
    }

    fn id_list(&mut self, key: &str, pattern: Option<&Regex>) {
        match self.get(key).and_then(Json::as_array) {
            Some(items) => {
                if let Some(pattern) = pattern
                    && !items
                        .iter()
                        .all(|i| i.as_str().is_some_and(|s| pattern.is_match(s)))
                {
                    self.fail(format!("`{key}` holds an entry that is not a valid id"));
                }
                if pattern.is_none() && !items.iter().all(Json::is_string) {
                    self.fail(format!("`{key}` holds an entry that is not a string"));
                }
            }
            None => self.fail(format!("`{key}` is not a list")),
        }
    }

    fn task_start(&mut self) {
        self.matches("task", &TASK_ID, "a T-* task id");
        if let Some(fingerprint) = self.get("fingerprint") {
            self.fingerprint(fingerprint, "fingerprint");
        }
    }

    fn fingerprint(&mut self, value: &Json, name: &str) {
        let Some(fingerprint) = value.as_object() else {
            return self.fail(format!("`{name}` is not an object"));
        };
        closed(fingerprint, &["revision", "dirty"], name, self.found);
        if !is_filled(fingerprint.get("revision")) {
            self.fail(format!("`{name}.revision` is not a non-empty string"));
        }
        if !fingerprint.get("dirty").is_some_and(Json::is_string) {
            self.fail(format!("`{name}.dirty` is not a string"));
        }
    }

    fn approval(&mut self) {
        self.text("authority");
        self.one_of("mechanism", &["plan_authorship", "pre_authorization"]);
        self.matches("plan_digest", &HEX64, "a sha256 hex digest");
    }

    fn gate_run(&mut self) {
        self.text("command");
        if self
            .get("command")
            .and_then(Json::as_str)
            .is_some_and(|c| c.chars().count() > 500)
        {
            self.fail("`command` is longer than 500 characters");
        }
        self.text("cwd");
        if let Some(env) = self.get("env")
            && !env
                .as_object()
                .is_some_and(|e| e.values().all(Json::is_string))
        {
            self.fail("`env` is not an object of string values");
        }
        if !self
            .get("timeout_seconds")
            .is_some_and(|t| t.as_f64().is_some_and(|t| t > 0.0))
        {
            self.fail("`timeout_seconds` is not a number > 0");
        }
        if !self
            .get("exit_code")
            .is_some_and(|c| is_integer_at_least(c, i64::MIN))
        {
            self.fail("`exit_code` is not an integer");
        }
        self.matches("criterion", &CRITERION_ID, "an AC-* criterion id");
        self.matches("task", &TASK_ID, "a T-* task id");
    }

    fn adaptation(&mut self) {
        self.one_of(
            "kind",
            &["split", "reorder", "insert", "change_strategy", "retry"],
        );
        self.integer_at_least("trigger_observation", 1);
        for key in [
            "evidence_artifact",
            "hypothesis",
            "action",
            "rationale",
            "authority",
        ] {
            self.text(key);
        }
        self.id_list("affected_tasks", Some(&TASK_ID));
        self.id_list("affected_criteria", Some(&CRITERION_ID));
        self.id_list("evidence_invalidated", None);
        self.id_list("evidence_preserved", None);
        if let Some(impact) = self.get("resource_impact") {
            match impact.as_object() {
                Some(impact) => {
                    closed(impact, &["declared", "unit"], "resource_impact", self.found);
                    if !impact
                        .get("declared")
                        .and_then(Json::as_f64)
                        .is_some_and(|d| d >= 0.0)
                    {
                        self.fail("`resource_impact.declared` is not a number >= 0");
                    }
                    if !is_filled(impact.get("unit")) {
                        self.fail("`resource_impact.unit` is not a non-empty string");
                    }
                }
                None => self.fail("`resource_impact` is not an object"),
            }
        }
        match self.get("decision").and_then(Json::as_str) {
            Some("authorized") => self.optional_text("reason"),
            Some("refused") => self.text("reason"),
            _ => self.fail("`decision` is not authorized or refused"),
        }
    }

    fn amendment(&mut self) {
        for key in [
            "original_criterion",
            "observed_finding",
            "disposition",
            "revised_criterion",
            "reason",
            "authority",
        ] {
            self.text(key);
        }
        self.id_list("affected_tasks", Some(&TASK_ID));
        self.id_list("evidence_invalidated", None);
        self.id_list("evidence_preserved", None);
    }

    fn intervention(&mut self) {
        self.one_of(
            "category",
            &[
                "missing_intent",
                "new_authority",
                "environment_repair",
                "engineering_rescue",
            ],
        );
        self.text("description");
        self.text("question");
        self.optional_text("resolution");
    }

    fn resource_sample(&mut self) {
        self.text("source");
        if self.get("limit_id").is_some() {
            self.matches("limit_id", &LIMIT_ID, "a lowercase snake_case limit id");
        }
        if !self
            .get("value")
            .and_then(Json::as_f64)
            .is_some_and(|v| v >= 0.0)
        {
            self.fail("`value` is not a number >= 0");
        }
        self.text("unit");
    }

    fn control_pair(&mut self) {
        self.matches("criterion", &CRITERION_ID, "an AC-* criterion id");
        match self.get("check_artifacts").and_then(Json::as_array) {
            Some(items)
                if !items.is_empty()
                    && items
                        .iter()
                        .all(|i| i.as_str().is_some_and(|s| !s.trim().is_empty())) => {}
            _ => self.fail("`check_artifacts` is not a list of at least one path"),
        }
        let dirty = match self.get("starting_fingerprint") {
            Some(fingerprint) => {
                self.fingerprint(fingerprint, "starting_fingerprint");
                fingerprint
                    .get("dirty")
                    .and_then(Json::as_str)
                    .map(|d| !d.is_empty())
            }
            None => {
                self.fail("`starting_fingerprint` is missing");
                None
            }
        };
        let old = self.leg("old_leg", true);
        let new = self.leg("new_leg", false);
        let verdict = self.get("verdict").and_then(Json::as_str);
        if !matches!(
            verdict,
            Some("discriminating" | "non_discriminating" | "control_unavailable")
        ) {
            return self.fail(
                "`verdict` is not discriminating, non_discriminating or control_unavailable",
            );
        }
        // The verdict arithmetic is binding (rule 14): only (old FAIL, new PASS) discriminates.
        if let (Some(dirty), Some((available, old)), Some((_, Some(new)))) = (dirty, old, new) {
            let expected = if dirty || !available {
                "control_unavailable"
            } else if old == Some("FAIL") && new == "PASS" {
                "discriminating"
            } else {
                "non_discriminating"
            };
            if verdict != Some(expected) {
                self.fail(format!(
                    "`verdict` contradicts the legs: they give {expected}"
                ));
            }
        }
    }

    /// A control leg: `(available, outcome)` when its shape is sound.
    fn leg(&mut self, key: &str, old: bool) -> Option<(bool, Option<&'static str>)> {
        let Some(leg) = self.get(key).and_then(Json::as_object) else {
            self.fail(format!("`{key}` is not an object"));
            return None;
        };
        let allowed: &[&str] = if old {
            &["available", "outcome", "log"]
        } else {
            &["outcome", "log"]
        };
        closed(leg, allowed, key, self.found);
        let outcome = match leg.get("outcome").and_then(Json::as_str) {
            Some("PASS") => Some("PASS"),
            Some("FAIL") => Some("FAIL"),
            _ => None,
        };
        if let Some(log) = leg.get("log")
            && !is_filled(Some(log))
        {
            self.fail(format!("`{key}.log` is not a non-empty string"));
        }
        if !old {
            if outcome.is_none() {
                self.fail("`new_leg.outcome` is not PASS or FAIL");
            }
            if leg.get("log").is_none() {
                self.fail("`new_leg.log` is missing");
            }
            return Some((true, outcome));
        }
        let Some(available) = leg.get("available").and_then(Json::as_bool) else {
            self.fail("`old_leg.available` is not a boolean");
            return None;
        };
        if available && outcome.is_none() {
            self.fail("`old_leg.outcome` must be PASS or FAIL when the leg is available");
        }
        if !available && leg.contains_key("outcome") {
            self.fail("`old_leg` is unavailable yet carries an outcome");
        }
        Some((available, outcome))
    }

    fn selection(&mut self) {
        self.matches("task", &TASK_ID, "a T-* task id");
        match self.get("priority_boost").and_then(Json::as_bool) {
            Some(true) if self.get("aging").is_none() => {
                self.fail("`aging` is required when `priority_boost` is true")
            }
            Some(_) => {}
            None => self.fail("`priority_boost` is not a boolean"),
        }
        if let Some(aging) = self.get("aging") {
            match aging.as_object() {
                Some(aging) => {
                    closed(
                        aging,
                        &["waiting_since_seq", "threshold"],
                        "aging",
                        self.found,
                    );
                    if !aging
                        .get("waiting_since_seq")
                        .is_some_and(|s| is_integer_at_least(s, 1))
                    {
                        self.fail("`aging.waiting_since_seq` is not an integer >= 1");
                    }
                    if !is_filled(aging.get("threshold")) {
                        self.fail("`aging.threshold` is not a non-empty string");
                    }
                }
                None => self.fail("`aging` is not an object"),
            }
        }
    }

    fn refusal(&mut self) {
        self.text("subject");
        self.one_of("stage", &["task_start", "authorize", "dispatch", "gate"]);
        self.text("reason");
        if self.get("proposal").is_some() {
            self.integer_at_least("proposal", 1);
        }
    }

    fn view_render(&mut self) {
        self.text("view");
        self.matches("snapshot_digest", &HEX64, "a sha256 hex digest");
        if let Some(digests) = self.get("digests") {
            let sound = digests.as_object().is_some_and(|d| {
                !d.is_empty()
                    && d.iter().all(|(name, digest)| {
                        !name.trim().is_empty()
                            && digest.as_str().is_some_and(|s| HEX64.is_match(s))
                    })
            });
            if !sound {
                self.fail("`digests` is not a non-empty object of view names to sha256 digests");
            }
        }
    }

    fn delegation(&mut self) {
        self.matches("task", &TASK_ID, "a T-* task id");
        self.matches("delegation_id", &DELEGATION_ID, "1 to 64 of [A-Za-z0-9._-]");
        self.one_of("transport", &["headless", "interactive"]);
        self.matches("via", &ADDON, "an addon key");
        self.one_of("state", &["launched", "completed", "failed", "cancelled"]);
        for key in ["kind", "profile", "target"] {
            if let Some(value) = self.get(key)
                && !value
                    .as_str()
                    .is_some_and(|s| !s.is_empty() && s.chars().count() <= 200)
            {
                self.fail(format!(
                    "`{key}` is not a non-empty string of at most 200 characters"
                ));
            }
        }
        if let Some(worktree) = self.get("worktree")
            && !(worktree.is_null()
                || worktree
                    .as_str()
                    .is_some_and(|s| !s.is_empty() && s.chars().count() <= 300))
        {
            self.fail("`worktree` is not a path of at most 300 characters or null");
        }
        let state = self.get("state").and_then(Json::as_str);
        if state == Some("launched") && self.get("prompt_digest").is_none() {
            self.fail("`prompt_digest` is required on launch");
        }
        for key in ["prompt_digest", "result_digest"] {
            if self.get(key).is_some() {
                self.matches(key, &DIGEST, "sha256:<64 hex>");
            }
        }
        if let Some(path) = self.get("result_path") {
            // The public pattern's `.` (ECMA-262) refuses line terminators.
            let relative = path.as_str().is_some_and(|p| {
                !p.is_empty()
                    && !p.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
                    && !p.starts_with('/')
                    && !p.split('/').any(|part| part == "..")
            });
            if !relative {
                self.fail("`result_path` is not a relative path inside the plan or repository");
            }
            if !matches!(state, Some("completed" | "failed")) {
                self.fail("`result_path` is carried only by a completed or failed delegation");
            }
        }
    }

    /// Trust labels only on evidence; `observed`/`imported` cite a pointer; `observed` only
    /// from an actor that executes (rule 11).
    fn trust(&mut self, kind: &str, agent_observed: &mut Option<String>) {
        let trust = self.get("trust");
        if !EVIDENCE_TYPES.contains(&kind) {
            if trust.is_some() || (kind == "delegation" && self.get("evidence_path").is_some()) {
                self.fail(format!(
                    "a {kind} event is not evidence: it carries no trust label or evidence_path"
                ));
            }
            return;
        }
        let Some(trust) = trust
            .and_then(Json::as_str)
            .filter(|t| ["observed", "imported", "asserted"].contains(t))
        else {
            return self.fail("`trust` is not observed, imported or asserted");
        };
        let path = self.get("evidence_path");
        if let Some(path) = path
            && path.as_str().is_none_or(str::is_empty)
        {
            self.fail("`evidence_path` is not a non-empty string");
        }
        if trust != "asserted" && path.and_then(Json::as_str).is_none_or(str::is_empty) {
            self.fail(format!("`evidence_path` is required for {trust} evidence"));
        }
        let actor = self
            .get("actor")
            .and_then(|a| a.get("kind"))
            .and_then(Json::as_str);
        if trust == "observed" && !matches!(actor, Some("helper" | "host_adapter")) {
            *agent_observed = Some(format!(
                "claims observed {kind} evidence from a{} {} actor: only the tooling that executed a check observes it",
                if actor.is_some_and(|a| a.starts_with(['a', 'e', 'i', 'o', 'u'])) {
                    "n"
                } else {
                    ""
                },
                actor.unwrap_or("unnamed")
            ));
        }
    }
}

/// A string with something in it besides whitespace.
fn is_filled(value: Option<&Json>) -> bool {
    value
        .and_then(Json::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

/// Unknown keys of a nested closed object.
fn closed(object: &Object, allowed: &[&str], name: &str, found: &mut Vec<String>) {
    for key in object.keys() {
        if !allowed.contains(&key) {
            found.push(format!(
                "`{name}.{key}` is not a known field (closed object)"
            ));
        }
    }
}

/// A JSON number (never a bool), as f64 for comparisons.
pub fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

fn is_integer_at_least(value: &Json, floor: i64) -> bool {
    match value {
        Json::Number(n) if !value.is_f64() => match value.as_i64() {
            Some(v) => v >= floor,
            // Beyond i64: a positive integer of any size is above every floor used here.
            None => !n.starts_with('-'),
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_plan_name_fits_the_event_plan_pattern_so_its_regex_is_skipped() {
        let names = [
            "PLAN_ab_cd",
            "PLAN_041_shop_services_split",
            "PLAN_a_b_c_d_e",
            "PLAN_a_b_c_d_e_f",
            "PLAN_ab",
            "PLAN_Ab_cd",
            "PLAN_ab__cd",
            "PLAN_ab_cd_",
            "PLAN_",
            "plan_ab_cd",
            "PLAN_ab-cd_ef",
            "PLAN_12_ab",
            "PLAN_0001_ab_cd_ef_gh_ij",
            "PLAN_é_ab",
        ];
        let name_pattern = Regex::new(crate::plan::PLAN_NAME_PATTERN).unwrap();
        for name in names {
            let fast = crate::plan::is_plan_name(name);
            assert_eq!(fast, name_pattern.is_match(name), "{name}");
            assert!(
                !fast || PLAN_ID.is_match(name),
                "{name} skips the regex it would fail"
            );
        }
    }

    const PLAN: &str = "PLAN_record_events";

    fn hex(pair: &str) -> String {
        pair.repeat(32)
    }

    /// A valid event of type `kind` in `generation`, its optional fields filled in.
    fn event(kind: &str, generation: RecordGeneration) -> Value {
        let fingerprint = json!({"revision": "4f2a9c1", "dirty": ""});
        let body = match kind {
            "task_start" => json!({"task": "T-read", "fingerprint": fingerprint}),
            "approval" => json!({"authority": "the user", "mechanism": "plan_authorship",
                "plan_digest": hex("9d")}),
            "gate_run" => json!({"command": "cargo test", "cwd": ".", "env": {"A": "1"},
                "timeout_seconds": 60, "exit_code": 0, "trust": "observed",
                "evidence_path": "gates/T-read/1.log", "criterion": "AC-reads", "task": "T-read"}),
            "observation" => json!({"statement": "the tail is torn", "trust": "asserted"}),
            "adaptation" => json!({"kind": "split", "trigger_observation": 5,
                "evidence_artifact": "logs/tail.txt", "hypothesis": "h", "action": "a",
                "rationale": "r", "affected_tasks": ["T-read"], "affected_criteria": ["AC-reads"],
                "authority": "the user", "evidence_invalidated": [], "evidence_preserved": [],
                "resource_impact": {"declared": 5, "unit": "tokens"}, "decision": "authorized"}),
            "amendment" => json!({"original_criterion": "o", "observed_finding": "f",
                "disposition": "d", "revised_criterion": "r", "reason": "why",
                "authority": "the user", "affected_tasks": ["T-read"],
                "evidence_invalidated": ["AC-reads"], "evidence_preserved": []}),
            "intervention" => json!({"category": "new_authority", "description": "d",
                "question": "may I?", "resolution": "yes"}),
            "resource_sample" => json!({"source": "meter", "limit_id": "tokens", "value": 1.5,
                "unit": "tokens", "trust": "imported", "evidence_path": "logs/meter.json"}),
            "control_pair" => json!({"criterion": "AC-reads", "check_artifacts": ["tests/a.rs"],
                "starting_fingerprint": fingerprint,
                "old_leg": {"available": true, "outcome": "FAIL", "log": "old.log"},
                "new_leg": {"outcome": "PASS", "log": "new.log"},
                "verdict": "discriminating", "trust": "observed", "evidence_path": "pair.json"}),
            "selection" => json!({"task": "T-read", "priority_boost": true,
                "aging": {"waiting_since_seq": 3, "threshold": "12 events"}}),
            "refusal" => json!({"subject": "T-read", "stage": "gate", "reason": "r",
                "proposal": 6}),
            "view_render" => json!({"view": "PROGRESS.md", "snapshot_digest": hex("e0"),
                "digests": {"PROGRESS.md": hex("e1")}}),
            "reconciliation" => json!({"trigger": "t", "editor": "e", "authority": "a"}),
            "journal_repair" => json!({"byte_offset": 0, "cause": "torn tail"}),
            "delegation" => json!({"task": "T-read", "delegation_id": "read-1",
                "transport": "headless", "via": "agentkit", "kind": "claude",
                "profile": "default", "target": "wt", "worktree": null,
                "prompt_digest": format!("sha256:{}", hex("7a")), "state": "launched"}),
            other => panic!("no event of type {other}"),
        };
        let mut event = json!({
            "schema": generation.url("journal-event"), "type": kind, "seq": 8,
            "ts": "2026-04-02T09:30:00Z", "plan": PLAN, "contract_id": hex("3c"),
            "actor": {"kind": "helper", "identity": "dwp"}, "note": "n"
        });
        let fields = event.as_object_mut().unwrap();
        fields.extend(body.as_object().unwrap().clone());
        event
    }

    fn expect(generation: RecordGeneration) -> Expect<'static> {
        Expect {
            generation: Some(generation),
            plan: Some(PLAN),
        }
    }

    /// `event` with the value at `pointer` replaced, or removed when `to` is `None`.
    fn mutated(mut event: Value, pointer: &str, to: Option<Value>) -> Value {
        match to {
            Some(value) => match event.pointer_mut(pointer) {
                Some(slot) => *slot = value,
                None => {
                    let (parent, key) = pointer.rsplit_once('/').unwrap();
                    event.pointer_mut(parent).unwrap()[key] = value;
                }
            },
            None => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                let removed = event.pointer_mut(parent).unwrap().as_object_mut().unwrap();
                assert!(
                    removed.shift_remove(key).is_some(),
                    "{pointer} is not there"
                );
            }
        }
        event
    }

    /// Every event type of v7: the v6 catalog and `delegation`.
    fn all_types() -> impl Iterator<Item = &'static str> {
        V6_TYPES.into_iter().chain(["delegation"])
    }

    #[test]
    fn a_valid_event_of_every_type_passes() {
        for kind in all_types() {
            let generation = RecordGeneration::V7;
            let problems = check(&event(kind, generation), &expect(generation));
            assert_eq!(problems, EventProblems::default(), "{kind}");
            if kind != "delegation" {
                let v6 = RecordGeneration::V6;
                assert_eq!(
                    check(&event(kind, v6), &expect(v6)),
                    EventProblems::default()
                );
            }
        }
    }

    fn bad(s: &str) -> Option<Value> {
        Some(json!(s))
    }

    /// `(type, pointer, new value or removal)`: each breaks exactly one constraint.
    fn one_constraint_mutations() -> Vec<(&'static str, &'static str, Option<Value>)> {
        vec![
            // The envelope, on any type.
            ("task_start", "/seq", Some(json!(0))),
            ("task_start", "/seq", Some(json!(1.0))),
            ("task_start", "/seq", None),
            ("task_start", "/ts", bad("tomorrow")),
            ("task_start", "/plan", bad("PLAN_other_plan")),
            ("task_start", "/plan", bad("plan")),
            ("task_start", "/contract_id", Some(json!(hex("3C")))),
            ("task_start", "/actor", bad("dwp")),
            ("task_start", "/actor/kind", bad("bot")),
            ("task_start", "/actor/identity", bad(" ")),
            (
                "task_start",
                "/actor/identity",
                Some(json!("a".repeat(101))),
            ),
            ("task_start", "/actor/model", bad("x")),
            ("task_start", "/note", Some(json!("a".repeat(501)))),
            ("task_start", "/note", Some(json!(5))),
            ("task_start", "/host", bad("ci")),
            // task_start
            ("task_start", "/task", bad("T-Read")),
            ("task_start", "/task", None),
            ("task_start", "/fingerprint/revision", bad("")),
            ("task_start", "/fingerprint/dirty", Some(json!(false))),
            ("task_start", "/fingerprint/branch", bad("main")),
            ("task_start", "/fingerprint", bad("4f2a9c1")),
            // approval
            ("approval", "/authority", bad("  ")),
            ("approval", "/mechanism", bad("migration")),
            (
                "approval",
                "/plan_digest",
                Some(json!(format!("sha256:{}", hex("9d")))),
            ),
            // gate_run
            ("gate_run", "/command", bad("")),
            ("gate_run", "/command", Some(json!("a".repeat(501)))),
            ("gate_run", "/cwd", None),
            ("gate_run", "/env/A", Some(json!(1))),
            ("gate_run", "/timeout_seconds", Some(json!(0))),
            ("gate_run", "/timeout_seconds", bad("60")),
            ("gate_run", "/exit_code", Some(json!(0.5))),
            ("gate_run", "/exit_code", None),
            ("gate_run", "/criterion", bad("AC_reads")),
            ("gate_run", "/task", bad("read")),
            ("gate_run", "/trust", bad("verified")),
            ("gate_run", "/statement", bad("x")),
            // observation
            ("observation", "/statement", bad(" ")),
            ("observation", "/trust", None),
            ("observation", "/exit_code", Some(json!(0))),
            // adaptation
            ("adaptation", "/kind", bad("abandon")),
            ("adaptation", "/trigger_observation", Some(json!(0))),
            ("adaptation", "/hypothesis", bad("")),
            ("adaptation", "/affected_tasks/0", bad("read")),
            ("adaptation", "/affected_criteria/0", bad("reads")),
            ("adaptation", "/evidence_invalidated", Some(json!([1]))),
            ("adaptation", "/evidence_preserved", None),
            ("adaptation", "/resource_impact/declared", Some(json!(-1))),
            ("adaptation", "/resource_impact/unit", bad("")),
            ("adaptation", "/resource_impact/measured", Some(json!(1))),
            ("adaptation", "/decision", bad("pending")),
            ("adaptation", "/decision", bad("refused")),
            ("adaptation", "/reason", bad(" ")),
            // amendment
            ("amendment", "/revised_criterion", bad("")),
            ("amendment", "/affected_tasks", bad("T-read")),
            ("amendment", "/evidence_invalidated", None),
            // intervention
            ("intervention", "/category", bad("other")),
            ("intervention", "/question", None),
            ("intervention", "/resolution", bad("")),
            // resource_sample
            ("resource_sample", "/source", bad("")),
            ("resource_sample", "/limit_id", bad("wall-minutes")),
            ("resource_sample", "/value", Some(json!(-1))),
            ("resource_sample", "/value", bad("1")),
            ("resource_sample", "/unit", None),
            // control_pair
            ("control_pair", "/criterion", bad("reads")),
            ("control_pair", "/check_artifacts", Some(json!([]))),
            ("control_pair", "/check_artifacts", Some(json!([" "]))),
            ("control_pair", "/starting_fingerprint", None),
            ("control_pair", "/starting_fingerprint/x", bad("y")),
            ("control_pair", "/old_leg/available", bad("yes")),
            ("control_pair", "/old_leg/outcome", None),
            ("control_pair", "/old_leg/outcome", bad("fail")),
            ("control_pair", "/old_leg/reason", bad("dirty")),
            ("control_pair", "/old_leg/log", bad("")),
            ("control_pair", "/new_leg/outcome", bad("pass")),
            ("control_pair", "/new_leg/log", None),
            ("control_pair", "/new_leg/seconds", Some(json!(3))),
            ("control_pair", "/verdict", bad("inconclusive")),
            // selection
            ("selection", "/priority_boost", bad("true")),
            ("selection", "/aging", None),
            ("selection", "/aging/waiting_since_seq", Some(json!(0))),
            ("selection", "/aging/threshold", bad("")),
            ("selection", "/aging/x", Some(json!(1))),
            ("selection", "/task", bad("T_read")),
            // refusal
            ("refusal", "/subject", bad("")),
            ("refusal", "/stage", bad("review")),
            ("refusal", "/reason", None),
            ("refusal", "/proposal", Some(json!(0))),
            // view_render
            ("view_render", "/view", bad("")),
            ("view_render", "/snapshot_digest", bad("e0")),
            ("view_render", "/digests", Some(json!({}))),
            ("view_render", "/digests/PROGRESS.md", bad("x")),
            // reconciliation
            ("reconciliation", "/trigger", bad("")),
            ("reconciliation", "/editor", None),
            ("reconciliation", "/authority", Some(json!(1))),
            // journal_repair
            ("journal_repair", "/byte_offset", Some(json!(-1))),
            ("journal_repair", "/byte_offset", Some(json!(1.5))),
            ("journal_repair", "/cause", bad(" ")),
            // delegation
            ("delegation", "/task", bad("read")),
            ("delegation", "/delegation_id", bad(".read")),
            ("delegation", "/delegation_id", Some(json!("a".repeat(65)))),
            ("delegation", "/transport", bad("remote")),
            ("delegation", "/via", bad("Agentkit")),
            ("delegation", "/state", bad("running")),
            ("delegation", "/kind", bad("")),
            ("delegation", "/profile", Some(json!("a".repeat(201)))),
            ("delegation", "/worktree", bad("")),
            ("delegation", "/worktree", Some(json!("a".repeat(301)))),
            ("delegation", "/prompt_digest", None),
            ("delegation", "/prompt_digest", Some(json!(hex("7a")))),
            ("delegation", "/result_path", bad("out/result.md")),
            ("delegation", "/evidence_path", bad("out/result.md")),
        ]
    }

    #[test]
    fn each_broken_constraint_of_each_type_is_refused() {
        let generation = RecordGeneration::V7;
        let mut passed = Vec::new();
        for (kind, pointer, to) in one_constraint_mutations() {
            let event = mutated(event(kind, generation), pointer, to.clone());
            if check(&event, &expect(generation)).invalid.is_empty() {
                passed.push(format!("{kind} {pointer} -> {to:?}"));
            }
        }
        assert!(passed.is_empty(), "accepted:\n  {}", passed.join("\n  "));
    }

    fn delegation_done(state: &str) -> Value {
        let mut event = event("delegation", RecordGeneration::V7);
        event["state"] = json!(state);
        event["result_path"] = json!("out/result.md");
        event["result_digest"] = json!(format!("sha256:{}", hex("ab")));
        event
    }

    #[test]
    fn a_delegation_result_path_is_relative_and_only_on_a_finished_delegation() {
        let v7 = expect(RecordGeneration::V7);
        for state in ["completed", "failed"] {
            assert_eq!(
                check(&delegation_done(state), &v7),
                EventProblems::default()
            );
        }
        for path in [
            "/etc/passwd",
            "../out.md",
            "out/../../x",
            "",
            "out/a\nb.md",
            "a\u{2028}b",
        ] {
            let mut event = delegation_done("completed");
            event["result_path"] = json!(path);
            assert!(!check(&event, &v7).invalid.is_empty(), "{path}");
        }
        let mut digest = delegation_done("completed");
        digest["result_digest"] = json!("ab");
        assert!(!check(&digest, &v7).invalid.is_empty());
    }

    #[test]
    fn trust_is_carried_only_by_evidence() {
        let v6 = RecordGeneration::V6;
        let mut start = event("task_start", v6);
        start["trust"] = json!("asserted");
        let problems = check(&start, &expect(v6));
        assert!(
            problems
                .invalid
                .iter()
                .any(|m| m.contains("is not evidence"))
        );
    }

    #[test]
    fn observed_and_imported_evidence_cite_an_evidence_path() {
        let v6 = RecordGeneration::V6;
        for (kind, trust) in [("gate_run", "observed"), ("resource_sample", "imported")] {
            let mut event = mutated(event(kind, v6), "/evidence_path", None);
            event["trust"] = json!(trust);
            let problems = check(&event, &expect(v6));
            assert!(
                problems
                    .invalid
                    .iter()
                    .any(|m| m.contains(&format!("required for {trust} evidence"))),
                "{kind}: {problems:?}"
            );
        }
        let mut asserted = mutated(event("gate_run", v6), "/evidence_path", None);
        asserted["trust"] = json!("asserted");
        assert_eq!(check(&asserted, &expect(v6)), EventProblems::default());
    }

    #[test]
    fn only_an_actor_that_executes_observes_and_that_is_agent_observed_not_invalid() {
        let v6 = RecordGeneration::V6;
        for actor in ["agent", "human"] {
            let mut gate = event("gate_run", v6);
            gate["actor"]["kind"] = json!(actor);
            let problems = check(&gate, &expect(v6));
            assert!(problems.invalid.is_empty(), "{actor}: {problems:?}");
            let message = problems.agent_observed.expect("agent_observed");
            assert!(message.contains(&format!("{actor} actor")), "{message}");
        }
        let mut host = event("gate_run", v6);
        host["actor"]["kind"] = json!("host_adapter");
        assert_eq!(check(&host, &expect(v6)), EventProblems::default());
    }

    #[test]
    fn generations_never_mix() {
        let v7_event = event("task_start", RecordGeneration::V7);
        let problems = check(&v7_event, &expect(RecordGeneration::V6));
        assert!(problems.invalid[0].contains("is a v7 event under a v6 contract"));
        let v6_event = event("task_start", RecordGeneration::V6);
        assert!(
            !check(&v6_event, &expect(RecordGeneration::V7))
                .invalid
                .is_empty()
        );
    }

    #[test]
    fn a_timestamp_is_written_in_ascii_digits() {
        let mut start = event("task_start", RecordGeneration::V7);
        assert!(
            check(&start, &expect(RecordGeneration::V7))
                .invalid
                .is_empty()
        );
        start["ts"] = json!("２０２６-04-02T09:30:00Z");
        let problems = check(&start, &expect(RecordGeneration::V7));
        assert_eq!(problems.invalid, vec!["`ts` is not an RFC 3339 timestamp"]);
    }

    #[test]
    fn a_delegation_is_no_v6_event() {
        let mut delegation = event("delegation", RecordGeneration::V7);
        delegation["schema"] = json!(RecordGeneration::V6.url("journal-event"));
        for live in [Some(RecordGeneration::V6), None] {
            let problems = check(
                &delegation,
                &Expect {
                    generation: live,
                    plan: None,
                },
            );
            assert!(
                problems.invalid[0].contains("is not in the v6 catalog"),
                "{problems:?}"
            );
        }
    }

    /// A control pair with the given starting `dirty`, legs and verdict.
    fn pair(dirty: &str, old: Value, new: &str, verdict: &str) -> EventProblems {
        let v7 = RecordGeneration::V7;
        let mut event = event("control_pair", v7);
        event["starting_fingerprint"]["dirty"] = json!(dirty);
        event["old_leg"] = old;
        event["new_leg"]["outcome"] = json!(new);
        event["verdict"] = json!(verdict);
        check(&event, &expect(v7))
    }

    fn leg(outcome: &str) -> Value {
        json!({"available": true, "outcome": outcome})
    }

    fn verdict_holds(problems: EventProblems) -> bool {
        problems.invalid.is_empty()
    }

    #[test]
    fn a_dirty_start_makes_the_control_unavailable() {
        assert!(verdict_holds(pair(
            "M src/a.rs",
            leg("FAIL"),
            "PASS",
            "control_unavailable"
        )));
        assert!(!verdict_holds(pair(
            "M src/a.rs",
            leg("FAIL"),
            "PASS",
            "discriminating"
        )));
    }

    #[test]
    fn an_unavailable_old_leg_makes_the_control_unavailable() {
        let gone = json!({"available": false});
        assert!(verdict_holds(pair(
            "",
            gone.clone(),
            "PASS",
            "control_unavailable"
        )));
        assert!(!verdict_holds(pair("", gone, "PASS", "non_discriminating")));
    }

    #[test]
    fn only_old_fail_new_pass_discriminates() {
        assert!(verdict_holds(pair(
            "",
            leg("FAIL"),
            "PASS",
            "discriminating"
        )));
        assert!(!verdict_holds(pair(
            "",
            leg("FAIL"),
            "PASS",
            "non_discriminating"
        )));
        for (old, new) in [("PASS", "PASS"), ("FAIL", "FAIL"), ("PASS", "FAIL")] {
            assert!(
                verdict_holds(pair("", leg(old), new, "non_discriminating")),
                "{old},{new}"
            );
            assert!(
                !verdict_holds(pair("", leg(old), new, "discriminating")),
                "{old},{new}"
            );
        }
    }
}
