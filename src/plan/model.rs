//! The typed plan-state model: `manifest.json` and `state.json` in all three schema
//! generations (v1, v2, v5).
//!
//! The types are closed (`deny_unknown_fields`) and keep the difference between an absent field
//! and an explicit `null` ([`Field`]), so that a document read and written back without a change
//! serializes to the same file bytes (`store::json_file_bytes`). Field order is the order of the spec's examples, which
//! is the order serialization writes. Timestamps stay strings: the schema does not check
//! their format, so [`crate::rules::invariants`] does, and a value is never reformatted behind the
//! caller's back.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The three schema generations dwp knows. v5 is a snapshot of v2 under a new URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    V1,
    V2,
    V5,
}

/// Which of the two JSON artifacts a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocKind {
    Manifest,
    State,
}

const URL_PREFIX: &str = "https://deepworkplan.com/schema/";

impl Generation {
    pub const ALL: [Generation; 3] = [Generation::V1, Generation::V2, Generation::V5];

    pub fn number(self) -> u32 {
        match self {
            Generation::V1 => 1,
            Generation::V2 => 2,
            Generation::V5 => 5,
        }
    }

    /// v2 and later carry typed locators, `format` and `materialization`.
    pub fn has_locators(self) -> bool {
        self != Generation::V1
    }

    /// The `schema` URL of a document of this generation and kind.
    pub fn url(self, kind: DocKind) -> String {
        format!("{URL_PREFIX}{}/v{}.json", kind.slug(), self.number())
    }
}

impl DocKind {
    pub fn slug(self) -> &'static str {
        match self {
            DocKind::Manifest => "plan-manifest",
            DocKind::State => "plan-state",
        }
    }

    /// The file name this artifact has inside a plan folder.
    pub fn file_name(self) -> &'static str {
        match self {
            DocKind::Manifest => "manifest.json",
            DocKind::State => "state.json",
        }
    }
}

/// What a `schema` URL says about a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaId {
    Known(DocKind, Generation),
    /// A deepworkplan.com URL of a generation this dwp does not know: a plan from a newer spec.
    Newer(DocKind, u32),
    Unknown,
}

impl SchemaId {
    /// What a `schema` URL names.
    ///
    /// ```
    /// use dwp::plan::model::{DocKind, Generation, SchemaId};
    /// let url = "https://deepworkplan.com/schema/plan-state/v5.json";
    /// assert_eq!(SchemaId::parse(url), SchemaId::Known(DocKind::State, Generation::V5));
    /// let newer = "https://deepworkplan.com/schema/plan-state/v6.json";
    /// assert_eq!(SchemaId::parse(newer), SchemaId::Newer(DocKind::State, 6));
    /// ```
    pub fn parse(url: &str) -> SchemaId {
        let Some(rest) = url.strip_prefix(URL_PREFIX) else {
            return SchemaId::Unknown;
        };
        let Some((slug, version)) = rest.split_once("/v") else {
            return SchemaId::Unknown;
        };
        let kind = match slug {
            "plan-manifest" => DocKind::Manifest,
            "plan-state" => DocKind::State,
            _ => return SchemaId::Unknown,
        };
        let Some(number) = version.strip_suffix(".json") else {
            return SchemaId::Unknown;
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) || number.len() > 6 {
            return SchemaId::Unknown;
        }
        let number: u32 = number.parse().unwrap_or(0);
        match Generation::ALL.into_iter().find(|g| g.number() == number) {
            Some(generation) => SchemaId::Known(kind, generation),
            None if number > Generation::V5.number() => SchemaId::Newer(kind, number),
            None => SchemaId::Unknown,
        }
    }
}

/// A field that may be absent, explicitly `null`, or hold a value. The spec gives `null` a
/// meaning of its own ("no blocker") and the written bytes must keep whichever form was read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Field<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Field<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Field::Absent)
    }

    pub fn value(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn value_mut(&mut self) -> Option<&mut T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            // Absent fields are skipped by `skip_serializing_if`; null is the safe fallback.
            Field::Absent | Field::Null => serializer.serialize_none(),
            Field::Value(v) => v.serialize(serializer),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map_or(Field::Null, Field::Value))
    }
}

/// Integers as JSON Schema sees them: `3` and `3.0` are both the integer 3 (draft 2020-12), so a
/// document the schema accepts is never refused by the typed layer for writing `3.0`.
pub(crate) mod int {
    use serde::de::{Error, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};
    use std::fmt;

    struct Integral;

    impl<'de> Visitor<'de> for Integral {
        type Value = i128;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an integer")
        }

        fn visit_i64<E: Error>(self, v: i64) -> Result<i128, E> {
            Ok(v.into())
        }

        fn visit_u64<E: Error>(self, v: u64) -> Result<i128, E> {
            Ok(v.into())
        }

        fn visit_f64<E: Error>(self, v: f64) -> Result<i128, E> {
            // Beyond 2^53 a float no longer holds every integer: the value read may not be the
            // value written, so it is refused rather than silently rounded.
            const EXACT: f64 = 9_007_199_254_740_992.0;
            if v.fract() != 0.0 {
                Err(E::custom(format_args!("{v} is not an integer")))
            } else if v.abs() >= EXACT {
                Err(E::custom(
                    "is an integer beyond what dwp can hold exactly (written as a float, or over 64 bits)",
                ))
            } else {
                Ok(v as i128)
            }
        }

        fn visit_u128<E: Error>(self, v: u128) -> Result<i128, E> {
            i128::try_from(v).map_err(|_| E::custom(format_args!("{v} is out of range")))
        }

        fn visit_i128<E: Error>(self, v: i128) -> Result<i128, E> {
            Ok(v)
        }

        /// serde_json keeps each number's lexeme (docs/DECISIONS.md) and hands over one that no
        /// primitive spells the same way (`1.50`, `2e3`, beyond 128 bits) as a one-entry map.
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<i128, A::Error> {
            let lexeme = match map.next_entry::<String, String>()? {
                Some((key, lexeme)) if key == crate::plan::json::NUMBER_TOKEN => lexeme,
                _ => return Err(A::Error::custom("an object is not an integer")),
            };
            if lexeme.contains(['.', 'e', 'E']) {
                let v: f64 = lexeme.parse().map_err(A::Error::custom)?;
                self.visit_f64(v)
            } else {
                lexeme
                    .parse::<i128>()
                    .map_err(|_| A::Error::custom(format_args!("{lexeme} is out of range")))
            }
        }
    }

    fn integral<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
        d.deserialize_any(Integral)
    }

    pub fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let v = integral(d)?;
        u64::try_from(v).map_err(|_| D::Error::custom(format_args!("{v} is out of range")))
    }

    pub fn i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let v = integral(d)?;
        i64::try_from(v).map_err(|_| D::Error::custom(format_args!("{v} is out of range")))
    }

    pub fn opt_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        #[derive(Deserialize)]
        struct Wrap(#[serde(deserialize_with = "i64")] i64);
        Ok(Option::<Wrap>::deserialize(d)?.map(|w| w.0))
    }
}

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(format!(
                        "`{s}` is not one of {}",
                        [$($text),+].join(", ")
                    )),
                }
            }
        }
    };
}

string_enum!(
    /// A task's execution status.
    TaskStatus {
        Pending => "pending",
        InProgress => "in_progress",
        Completed => "completed",
        Blocked => "blocked",
        Skipped => "skipped",
    }
);

string_enum!(
    /// The plan's status, derived from its tasks and blocker.
    PlanStatus {
        Pending => "pending",
        InProgress => "in_progress",
        Completed => "completed",
        Blocked => "blocked",
    }
);

string_enum!(PlanFormat { Lite => "lite", Full => "full" });

string_enum!(Materialization {
    Materializing => "materializing",
    Ready => "ready",
    Promoting => "promoting",
});

string_enum!(Approval {
    Pending => "pending",
    Approved => "approved",
    PreApproved => "pre_approved",
});

string_enum!(Archetype {
    Individual => "individual",
    OrchestratorHub => "orchestrator-hub",
    AgentWorkspace => "agent-workspace",
});

string_enum!(Rigor {
    Micro => "micro",
    Standard => "standard",
    Deep => "deep",
});

string_enum!(PromotionPhase {
    Intent => "intent",
    TasksWritten => "tasks_written",
    Switched => "switched",
});

string_enum!(LocatorKind {
    Inline => "inline",
    File => "file",
});

/// `manifest.json`: the plan's static identity, written once at materialization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub schema: String,
    pub spec_version: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub archetype: Archetype,
    pub rigor: Rigor,
    /// Required from v2 on; absent in v1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_format: Option<PlanFormat>,
    pub created_at: String,
    /// Closed `{agent, model}` in v1, any object from v2 on: kept as an open map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(deserialize_with = "int::u64")]
    pub task_count: u64,
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub parent_plan: Field<String>,
}

/// `updated_by`: who wrote the state last.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Actor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// `state.json`: the live execution state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub schema: String,
    pub plan: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_by: Option<Actor>,
    pub status: PlanStatus,
    #[serde(deserialize_with = "int::u64")]
    pub completed_count: u64,
    #[serde(deserialize_with = "int::u64")]
    pub task_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<PlanFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub materialization: Option<Materialization>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub promotion: Field<Promotion>,
    pub tasks: Vec<Task>,
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub checkpoint: Field<Checkpoint>,
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub blocked: Field<Blocker>,
}

/// A Lite-to-Full promotion in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Promotion {
    pub from: String,
    pub to: String,
    pub phase: PromotionPhase,
}

/// A v2/v5 task locator: the task file (Full) or the README anchor (Lite).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locator {
    pub kind: LocatorKind,
    pub value: String,
}

/// One task entry. v1 names its file in `file`; v2/v5 use `locator`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    #[serde(deserialize_with = "int::u64")]
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<Locator>,
    pub title: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Required from v2 on; optional in v1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<Vec<Gate>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

impl Task {
    /// The file name or anchor that locates this task, whatever the generation.
    pub fn locator_value(&self) -> Option<&str> {
        match (&self.locator, &self.file) {
            (Some(locator), _) => Some(&locator.value),
            (None, Some(file)) => Some(file),
            (None, None) => None,
        }
    }

    pub fn gates(&self) -> &[Gate] {
        self.gates.as_deref().unwrap_or(&[])
    }
}

/// One validation-gate record. Closed: `command, passes, exit_code, last_run, evidence`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    pub command: String,
    pub passes: bool,
    #[serde(
        default,
        deserialize_with = "int::opt_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_code: Option<i64>,
    pub last_run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// A completed task's episodic memory: what was tried, failed and worked.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tried: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worked: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// The finest-grained resume point inside the current task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    #[serde(deserialize_with = "int::u64")]
    pub task: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Why the plan stopped, and what it needs to go on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blocker {
    #[serde(deserialize_with = "int::u64")]
    pub task: u64,
    pub reason: String,
    pub since: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// A date-time field of a state: where it is, its text, and the task it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timestamp<'a> {
    pub place: TimestampPlace,
    pub text: &'a str,
    pub task: Option<u64>,
}

/// Where a [`Timestamp`] is; its JSON path is spelled only when a finding names it (a state of
/// 10,000 tasks has about 15,000 of them, and every writer looks at each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampPlace {
    UpdatedAt,
    /// `$.tasks[index].field`.
    Task {
        index: usize,
        field: &'static str,
    },
    /// `$.tasks[index].gates[gate].last_run`.
    Gate {
        index: usize,
        gate: usize,
    },
    CheckpointAt,
    BlockedSince,
}

impl<'a> Timestamp<'a> {
    /// The JSON path of the field (`$.tasks[3].started_at`).
    pub fn path(&self) -> String {
        match self.place {
            TimestampPlace::UpdatedAt => "$.updated_at".into(),
            TimestampPlace::Task { index, field } => format!("$.tasks[{index}].{field}"),
            TimestampPlace::Gate { index, gate } => {
                format!("$.tasks[{index}].gates[{gate}].last_run")
            }
            TimestampPlace::CheckpointAt => "$.checkpoint.at".into(),
            TimestampPlace::BlockedSince => "$.blocked.since".into(),
        }
    }
}

impl State {
    /// Every date-time the state records: `updated_at`, each task's `started_at`,
    /// `completed_at` and gate `last_run`, the checkpoint's `at`, the blocker's `since`. An
    /// iterator: a 10,000-task state has about 15,000, and a writer only looks at each once.
    pub fn timestamps(&self) -> impl Iterator<Item = Timestamp<'_>> {
        let updated = Timestamp {
            place: TimestampPlace::UpdatedAt,
            text: &self.updated_at,
            task: None,
        };
        let tasks = self.tasks.iter().enumerate().flat_map(|(index, task)| {
            let times = [
                ("started_at", &task.started_at),
                ("completed_at", &task.completed_at),
            ];
            let times = times.into_iter().filter_map(move |(field, value)| {
                Some(Timestamp {
                    place: TimestampPlace::Task { index, field },
                    text: value.as_deref()?,
                    task: Some(task.id),
                })
            });
            let gates = task
                .gates()
                .iter()
                .enumerate()
                .map(move |(gate, record)| Timestamp {
                    place: TimestampPlace::Gate { index, gate },
                    text: &record.last_run,
                    task: Some(task.id),
                });
            times.chain(gates)
        });
        let checkpoint = self.checkpoint.value().map(|c| Timestamp {
            place: TimestampPlace::CheckpointAt,
            text: &c.at,
            task: Some(c.task),
        });
        let blocker = self.blocked.value().map(|b| Timestamp {
            place: TimestampPlace::BlockedSince,
            text: &b.since,
            task: Some(b.task),
        });
        std::iter::once(updated)
            .chain(tasks)
            .chain(checkpoint)
            .chain(blocker)
    }

    /// Record who writes (`--agent`, `--model`) in `updated_by`; a name not given keeps the one
    /// recorded, and giving neither leaves `updated_by` as it was.
    pub fn sign(&mut self, agent: Option<&String>, model: Option<&String>) {
        if agent.is_none() && model.is_none() {
            return;
        }
        let previous = self.updated_by.clone().unwrap_or_default();
        self.updated_by = Some(Actor {
            agent: agent.cloned().or(previous.agent),
            model: model.cloned().or(previous.model),
        });
    }

    /// The plan status the spec derives from the tasks and the blocker: blocked if a blocker is
    /// active or a task is blocked; completed only if every task is completed (skipped work never
    /// completes a plan); in_progress once any task has moved; else pending.
    pub fn derived_status(&self) -> PlanStatus {
        let blocked = self.blocked.value().is_some()
            || self.tasks.iter().any(|t| t.status == TaskStatus::Blocked);
        if blocked {
            PlanStatus::Blocked
        } else if self.tasks.iter().all(|t| t.status == TaskStatus::Completed) {
            PlanStatus::Completed
        } else if self.tasks.iter().any(|t| t.status != TaskStatus::Pending) {
            PlanStatus::InProgress
        } else {
            PlanStatus::Pending
        }
    }

    /// A copy with no task entries: the document around the tasks (cheap, for checks of it).
    pub fn clone_without_tasks(&self) -> State {
        State {
            schema: self.schema.clone(),
            plan: self.plan.clone(),
            updated_at: self.updated_at.clone(),
            updated_by: self.updated_by.clone(),
            status: self.status,
            completed_count: self.completed_count,
            task_count: self.task_count,
            format: self.format,
            materialization: self.materialization,
            approval: self.approval,
            promotion: self.promotion.clone(),
            tasks: Vec::new(),
            checkpoint: self.checkpoint.clone(),
            blocked: self.blocked.clone(),
        }
    }

    /// Whether everything but the tasks equals `shell`, a [`State::clone_without_tasks`]
    /// (mutable only to set the tasks aside while comparing).
    pub fn same_shell(&mut self, shell: &State) -> bool {
        debug_assert!(shell.tasks.is_empty(), "a shell has no tasks");
        let tasks = std::mem::take(&mut self.tasks);
        let same = *self == *shell;
        self.tasks = tasks;
        same
    }

    pub fn completed_tasks(&self) -> u64 {
        self.tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Completed)
            .count() as u64
    }

    /// The task with this id: O(1) when ids are 1..N in order (the invariant), else a scan.
    pub fn task(&self, id: u64) -> Option<&Task> {
        let slot = usize::try_from(id).ok()?.checked_sub(1)?;
        match self.tasks.get(slot) {
            Some(task) if task.id == id => Some(task),
            _ => self.tasks.iter().find(|t| t.id == id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_urls_parse_into_kind_and_generation() {
        for generation in Generation::ALL {
            for kind in [DocKind::Manifest, DocKind::State] {
                assert_eq!(
                    SchemaId::parse(&generation.url(kind)),
                    SchemaId::Known(kind, generation)
                );
            }
        }
        assert_eq!(
            SchemaId::parse("https://deepworkplan.com/schema/plan-state/v6.json"),
            SchemaId::Newer(DocKind::State, 6)
        );
        assert_eq!(
            SchemaId::parse("https://deepworkplan.com/schema/plan-state/v3.json"),
            SchemaId::Unknown
        );
        assert_eq!(
            SchemaId::parse("https://example.com/plan-state/v2.json"),
            SchemaId::Unknown
        );
    }

    #[test]
    fn field_keeps_null_apart_from_absent() {
        let with_null: State = serde_json::from_str(
            r#"{"schema":"s","plan":"p","updated_at":"t","status":"pending","completed_count":0,
                "task_count":1,"tasks":[],"blocked":null}"#,
        )
        .unwrap();
        assert_eq!(with_null.blocked, Field::Null);
        assert_eq!(with_null.checkpoint, Field::Absent);
        let text = serde_json::to_string(&with_null).unwrap();
        assert!(text.contains(r#""blocked":null"#));
        assert!(!text.contains("checkpoint"));
    }

    #[test]
    fn integral_floats_are_integers_as_json_schema_says() {
        let gate: Gate =
            serde_json::from_str(r#"{"command":"c","passes":true,"exit_code":0.0,"last_run":"t"}"#)
                .unwrap();
        assert_eq!(gate.exit_code, Some(0));
        let err = serde_json::from_str::<Gate>(
            r#"{"command":"c","passes":true,"exit_code":0.5,"last_run":"t"}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("not an integer"), "{err}");
        let inexact = serde_json::from_str::<Gate>(
            r#"{"command":"c","passes":true,"exit_code":9007199254740993.0,"last_run":"t"}"#,
        )
        .unwrap_err();
        assert!(inexact.to_string().contains("exactly"), "{inexact}");
    }
}
