//! Synthetic plans for tests and benchmarks: Lite and Full plans of N tasks, the first K
//! completed with passing gates, conformant by construction, with every timestamp fixed so the
//! bytes are reproducible. Not used by any command; public so that integration tests and
//! `benches/` share one generator.

use crate::plan::model::{
    Actor, Approval, Archetype, Checkpoint, DocKind, Field, Gate, Generation, Locator, LocatorKind,
    Manifest, Materialization, Outcome, PlanFormat, Rigor, State, Task, TaskStatus,
};
use crate::store::json_file_bytes;
use chrono::{DateTime, Duration, Utc};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// The shape of a synthetic plan.
#[derive(Debug, Clone)]
pub struct SynthPlan {
    /// `PLAN_...`, also the folder name.
    pub name: String,
    pub tasks: usize,
    /// How many leading tasks are completed (with a passing gate each).
    pub completed: usize,
    pub format: PlanFormat,
    pub generation: Generation,
    /// Ready for `dwp finalize`: every task but the last completed, the last in progress with a
    /// passing gate, and the markdown already authored as complete (boxes, Plan Status, logs).
    pub publishable: bool,
}

const BASE_TIME: &str = "2026-06-09T14:00:00Z";

/// The tests' clock (`DWP_TEST_NOW`) less a little: every time a synthetic plan records lies
/// before it, so a writer under the test clock never finds the state ahead of its clock.
const LAST_TIME: &str = "2026-06-09T16:40:00Z";

/// The time of step `units` of a plan whose steps run to `span`: ten units per task, a minute
/// each from 14:00 while that ends by 16:40, else a second each, ending at 16:40.
fn at_in(span: usize, units: usize) -> String {
    let base: DateTime<Utc> = BASE_TIME.parse().expect("constant");
    let last: DateTime<Utc> = LAST_TIME.parse().expect("constant");
    let minutes = Duration::minutes(span as i64);
    if base + minutes <= last {
        return crate::clock::rfc3339(base + Duration::minutes(units as i64));
    }
    crate::clock::rfc3339(last - Duration::seconds(span as i64) + Duration::seconds(units as i64))
}

impl SynthPlan {
    /// The time of step `units` of this plan (see [`at_in`]).
    fn at(&self, units: usize) -> String {
        at_in(self.tasks * 10 + 5, units)
    }

    /// A Full v5 plan of `tasks` pending tasks.
    pub fn new(name: &str, tasks: usize) -> SynthPlan {
        SynthPlan {
            name: name.to_owned(),
            tasks,
            completed: 0,
            format: PlanFormat::Full,
            generation: Generation::V5,
            publishable: false,
        }
    }

    /// A plan one step from publication (see [`SynthPlan::publishable`]).
    pub fn ready_to_publish(mut self) -> SynthPlan {
        self.publishable = true;
        self.completed = self.tasks.saturating_sub(1);
        self
    }

    /// Whether the markdown shows task `id` as done.
    fn authored_done(&self, id: usize) -> bool {
        id <= self.completed || self.publishable
    }

    /// The last task of a publishable plan: in progress, with a passing gate.
    fn is_publishing(&self, id: usize) -> bool {
        self.publishable && id == self.tasks
    }

    pub fn completed(mut self, completed: usize) -> SynthPlan {
        self.completed = completed.min(self.tasks);
        self
    }

    pub fn format(mut self, format: PlanFormat) -> SynthPlan {
        self.format = format;
        self
    }

    pub fn generation(mut self, generation: Generation) -> SynthPlan {
        self.generation = generation;
        self
    }

    fn title(&self, id: usize) -> String {
        if id == self.tasks && self.tasks > 1 {
            "Final review".to_owned()
        } else {
            format!("Synthetic task {id}")
        }
    }

    fn file_name(&self, id: usize) -> String {
        if id == self.tasks && self.tasks > 1 {
            format!("{id}.task_final_review.md")
        } else {
            format!("{id}.task_synthetic_{id}.md")
        }
    }

    fn spec_version(&self) -> &'static str {
        match self.generation {
            Generation::V1 => "2.2.0",
            Generation::V2 => "2.4.0",
            Generation::V5 => "5.0.0",
        }
    }

    pub fn manifest(&self) -> Manifest {
        let v1 = self.generation == Generation::V1;
        Manifest {
            schema: self.generation.url(DocKind::Manifest),
            spec_version: self.spec_version().to_owned(),
            name: self.name.clone(),
            title: Some(format!("Synthetic plan of {} tasks", self.tasks)),
            archetype: Archetype::Individual,
            rigor: Rigor::Standard,
            plan_format: (!v1).then_some(self.format),
            created_at: self.at(0),
            created_by: Some(
                serde_json::json!({"agent": "dwp-synth", "model": "none"})
                    .as_object()
                    .cloned()
                    .expect("object"),
            ),
            tags: Some(vec!["synthetic".to_owned()]),
            task_count: self.tasks as u64,
            parent_plan: Field::Null,
        }
    }

    fn task(&self, id: usize) -> Task {
        let done = id <= self.completed;
        let (file, locator) = match (self.generation, self.format) {
            (Generation::V1, _) => (Some(self.file_name(id)), None),
            (_, PlanFormat::Full) => (
                None,
                Some(Locator {
                    kind: LocatorKind::File,
                    value: self.file_name(id),
                }),
            ),
            (_, PlanFormat::Lite) => (
                None,
                Some(Locator {
                    kind: LocatorKind::Inline,
                    value: format!("#task-{id}"),
                }),
            ),
        };
        let gates = (done || self.is_publishing(id)).then(|| {
            vec![Gate {
                command: "cargo test".to_owned(),
                passes: true,
                exit_code: Some(0),
                last_run: self.at(id * 10 + 4),
                evidence: Some(format!("{} passed, 0 failed", 10 + id)),
            }]
        });
        Task {
            id: id as u64,
            file,
            locator,
            title: self.title(id),
            status: if done {
                TaskStatus::Completed
            } else if self.is_publishing(id) {
                TaskStatus::InProgress
            } else {
                TaskStatus::Pending
            },
            started_at: (done || self.is_publishing(id)).then(|| self.at(id * 10)),
            completed_at: done.then(|| self.at(id * 10 + 5)),
            commit: done.then(|| format!("{:07x}", 0xa1b2c3 + id)),
            gates: match (gates, self.generation) {
                (Some(g), _) => Some(g),
                (None, Generation::V1) => None,
                (None, _) => Some(Vec::new()),
            },
            outcome: done.then(|| Outcome {
                worked: Some(format!("implemented synthetic task {id}")),
                ..Outcome::default()
            }),
        }
    }

    pub fn state(&self) -> State {
        let v1 = self.generation == Generation::V1;
        let tasks: Vec<Task> = (1..=self.tasks).map(|id| self.task(id)).collect();
        let checkpoint = match self.completed {
            _ if self.publishable => Field::Value(Checkpoint {
                task: self.tasks as u64,
                step: Some("started".to_owned()),
                at: self.at(self.tasks * 10),
                note: Some(format!("task {} started", self.tasks)),
            }),
            0 => Field::Null,
            k => Field::Value(Checkpoint {
                task: k as u64,
                step: Some("done".to_owned()),
                at: self.at(k * 10 + 5),
                note: Some(format!("task {k} completed")),
            }),
        };
        let mut state = State {
            schema: self.generation.url(DocKind::State),
            plan: self.name.clone(),
            updated_at: if self.publishable {
                self.at(self.tasks * 10 + 4)
            } else {
                self.at(self.completed * 10 + 5)
            },
            updated_by: Some(Actor {
                agent: Some("dwp-synth".to_owned()),
                model: Some("none".to_owned()),
            }),
            status: crate::plan::model::PlanStatus::Pending,
            completed_count: self.completed as u64,
            task_count: self.tasks as u64,
            format: (!v1).then_some(self.format),
            materialization: (!v1).then_some(Materialization::Ready),
            approval: (!v1).then_some(Approval::Approved),
            promotion: if v1 { Field::Absent } else { Field::Null },
            tasks,
            checkpoint,
            blocked: Field::Null,
        };
        state.status = state.derived_status();
        state
    }

    fn task_list_line(&self, id: usize) -> String {
        let mark = if self.authored_done(id) { 'x' } else { ' ' };
        let target = match self.format {
            PlanFormat::Full => {
                let file = self.file_name(id);
                format!("[{file}]({file})")
            }
            PlanFormat::Lite => format!("[#task-{id}](#task-{id})"),
        };
        format!("- [{mark}] Task {id}: {} — {target}\n", self.title(id))
    }

    fn task_body(&self, id: usize, heading: &str, log_heading: &str) -> String {
        let done = self.authored_done(id);
        // The Final Review names its three parts (security, final-state, skills) in the words
        // both dwp and the public reference checker look for.
        let criteria = if self.title(id) == "Final review" {
            "- the security review records no unresolved critical finding\n\
             - the final-state validation of the code and of this plan's records passes\n\
             - skills candidates from the outcome records are reconciled"
                .to_owned()
        } else {
            format!("- synthetic behaviour {id} is covered by a test")
        };
        let mut body = String::new();
        let _ = write!(
            body,
            "{heading}\n\n### Context\n\nPart {id} of a synthetic plan.\n\n### Goal\n\n\
             Make synthetic behaviour {id} work.\n\n### Touched Surface\n\n- `src/synthetic_{id}.rs`\n\n\
             ### Acceptance Criteria\n\n{criteria}\n\n\
             ### Validation\n\n- `cargo test`\n\n{log_heading}\n\n"
        );
        if done {
            let _ = write!(
                body,
                "Status: completed\nTimestamp: {}\nGate record: cargo test → {} passed, 0 failed\n\
                 Skills disposition: none\nDocumentation decision: no change needed\n",
                self.at(id * 10 + 5),
                10 + id
            );
        } else {
            body.push_str("Status: pending\n");
        }
        body
    }

    /// The README.md of the plan.
    pub fn readme(&self) -> String {
        let mut text = format!(
            "# Synthetic plan of {} tasks\n\n**Standard:** DWP spec {}\n\n## Goal\n\n\
             Exercise dwp on a plan of known shape.\n\n## Context\n\n\
             Generated by dwp's synthetic plan generator.\n\n## Plan Variables\n\n\
             | Variable | Value |\n|---|---|\n| Plan Format | {} |\n| Materialization | ready |\n\
             | Approval | approved |\n| Rigor | standard |\n\n## Tasks\n\nPlan Status: {}/{}\n\n",
            self.tasks,
            self.spec_version(),
            self.format,
            if self.publishable {
                self.tasks
            } else {
                self.completed
            },
            self.tasks
        );
        for id in 1..=self.tasks {
            text.push_str(&self.task_list_line(id));
        }
        if self.format == PlanFormat::Lite {
            for id in 1..=self.tasks {
                text.push('\n');
                let heading = format!("## Task {id}: {} {{#task-{id}}}", self.title(id));
                text.push_str(&self.task_body(id, &heading, "### Completion log"));
            }
        }
        text
    }

    /// Write the whole plan folder under `parent` and return its path.
    pub fn write(&self, parent: &Path) -> io::Result<PathBuf> {
        let dir = parent.join(&self.name);
        std::fs::create_dir_all(dir.join("analysis_results"))?;
        std::fs::write(dir.join("manifest.json"), json_file_bytes(&self.manifest()))?;
        std::fs::write(dir.join("state.json"), json_file_bytes(&self.state()))?;
        std::fs::write(dir.join("README.md"), self.readme())?;
        let mut progress = String::from("# Progress\n\n");
        for id in 1..=self.completed {
            let _ = writeln!(progress, "- {}: task {id} completed", self.at(id * 10 + 5));
        }
        std::fs::write(dir.join("PROGRESS.md"), progress)?;
        std::fs::write(
            dir.join("PROMPTS.md"),
            "# Prompts\n\nSynthetic plan: no prompts.\n",
        )?;
        std::fs::write(
            dir.join("analysis_results/SECURITY_REVIEW.md"),
            "# Security review\n\nNo unresolved critical findings.\n",
        )?;
        if self.format == PlanFormat::Full {
            for id in 1..=self.tasks {
                let heading = format!("# Task {id}: {}", self.title(id));
                let body = self.task_body(id, &heading, "## Completion & Log");
                std::fs::write(dir.join(self.file_name(id)), body)?;
            }
        }
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_plans_are_valid_in_every_generation_and_format() {
        let root = tempfile::tempdir().unwrap();
        for generation in Generation::ALL {
            for format in [PlanFormat::Full, PlanFormat::Lite] {
                if generation == Generation::V1 && format == PlanFormat::Lite {
                    continue; // v1 has no inline locators
                }
                for completed in [0, 2, 5] {
                    let name = format!("PLAN_synth_v{}_{format}_{completed}", generation.number());
                    let dir = SynthPlan::new(&name, 5)
                        .completed(completed)
                        .format(format)
                        .generation(generation)
                        .write(root.path())
                        .unwrap();
                    let result = crate::commands::validate::validate(&dir);
                    assert!(result.findings.is_empty(), "{name}: {:#?}", result.findings);
                }
            }
        }
    }
}
