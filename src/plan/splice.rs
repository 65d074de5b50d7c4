//! A changed state's file bytes built from pieces: every task but the changed one serialized
//! apart (the guarded updater serializes those before it on a second core while its checks
//! run), then spliced around the changed task and the document around the tasks.
//!
//! The result is byte for byte what [`crate::store::json_file_bytes`] makes of the whole state
//! (serde_json's pretty printer, two spaces, a final newline); the tests hold that for every
//! position of the changed task. Where a piece does not have the shape the splice expects, the
//! caller gets `None` and serializes the whole state instead.

use crate::plan::model::{State, Task};
use serde::Serialize;

/// What the pretty printer writes around a value nested two arrays deep: the tasks of a state
/// sit at the same depth (`{"tasks": [...]}`), so the bytes in between are theirs as the whole
/// document has them.
const OPEN: &[u8] = b"[\n  [\n";
const CLOSE: &[u8] = b"\n  ]\n]";
/// The `tasks` key of a state serialized with no task. Its newline and indent make it the
/// top-level key: a JSON string never holds a raw newline.
const EMPTY_TASKS: &[u8] = b"\n  \"tasks\": []";

/// The serialized tasks of a state before and after the one a writer changes.
#[derive(Debug, Clone)]
pub struct TasksAround {
    /// The position of the changed task.
    index: usize,
    /// How many tasks the state had.
    count: usize,
    /// The tasks before it, then the tasks after it (see [`Elements`]).
    before: Elements,
    after: Elements,
}

impl TasksAround {
    /// Serialize every task of `tasks` but the one at `index`; `size` is about how many bytes
    /// the whole state takes (buffers sized from it, never grown by copies).
    pub fn of(tasks: &[Task], index: usize, size: usize) -> Option<TasksAround> {
        let before = TasksAround::before(tasks, index, size)?;
        TasksAround::after(tasks, size, before)
    }

    /// The first half of [`TasksAround::of`], which may run on another thread than the second:
    /// the tasks before `index`.
    pub fn before(tasks: &[Task], index: usize, size: usize) -> Option<Before> {
        let before = tasks.get(..index)?;
        let elements = Elements::of(before, share(size, tasks.len(), index))?;
        Some(Before { index, elements })
    }

    /// The second half of [`TasksAround::of`]: the tasks after the changed one, with `before`.
    pub fn after(tasks: &[Task], size: usize, before: Before) -> Option<TasksAround> {
        let index = before.index;
        let after = tasks.get(index + 1..)?;
        Some(TasksAround {
            index,
            count: tasks.len(),
            before: before.elements,
            after: Elements::of(after, share(size, tasks.len(), after.len()))?,
        })
    }

    /// `json_file_bytes(state)` when every task of `state` but the changed one equals the task
    /// these pieces were serialized from (the caller's promise: the updater changes one task).
    /// `None` when the state does not fit the pieces (another task count) or a piece is not in
    /// the expected shape.
    pub fn state_bytes(&self, state: &mut State) -> Option<Vec<u8>> {
        if state.tasks.len() != self.count {
            return None;
        }
        let changed = Elements::of(std::slice::from_ref(&state.tasks[self.index]), 0)?;
        let tasks = std::mem::take(&mut state.tasks);
        let shell = crate::store::json_file_bytes(state);
        state.tasks = tasks;
        let at = memchr::memmem::find(&shell, EMPTY_TASKS)? + EMPTY_TASKS.len() - 1;
        let (head, tail) = (&shell[..at], &shell[at + 1..]);

        let pieces = [&self.before, &changed, &self.after].map(Elements::bytes);
        let size = head.len() + pieces.iter().map(|p| p.len() + 2).sum::<usize>() + tail.len();
        let mut bytes = Vec::with_capacity(size + 8);
        bytes.extend_from_slice(head);
        for (n, piece) in pieces.into_iter().filter(|p| !p.is_empty()).enumerate() {
            bytes.extend_from_slice(if n == 0 { b"\n" } else { b",\n" });
            bytes.extend_from_slice(piece);
        }
        bytes.extend_from_slice(b"\n  ]");
        bytes.extend_from_slice(tail);
        Some(bytes)
    }
}

/// The tasks before the changed one, serialized, and the changed one's position
/// ([`TasksAround::before`]).
#[derive(Debug, Clone)]
pub struct Before {
    index: usize,
    elements: Elements,
}

/// About how many bytes `n` of `count` tasks take in a state of `size` bytes.
fn share(size: usize, count: usize, n: usize) -> usize {
    size / count.max(1) * n + 64
}

/// Tasks as the elements of a state's `tasks` array: each indented four spaces, separated by
/// `,\n`, with no bracket; empty for no task. Kept inside the buffer they were written to.
#[derive(Debug, Clone)]
struct Elements {
    buffer: Vec<u8>,
    inner: std::ops::Range<usize>,
}

impl Elements {
    fn of(tasks: &[Task], capacity: usize) -> Option<Elements> {
        if tasks.is_empty() {
            return Some(Elements {
                buffer: Vec::new(),
                inner: 0..0,
            });
        }
        let mut buffer = Vec::with_capacity(capacity);
        [tasks]
            .serialize(&mut serde_json::Serializer::pretty(&mut buffer))
            .ok()?;
        let fits = buffer.len() > OPEN.len() + CLOSE.len()
            && buffer.starts_with(OPEN)
            && buffer.ends_with(CLOSE);
        let inner = OPEN.len()..buffer.len() - CLOSE.len();
        fits.then_some(Elements { buffer, inner })
    }

    fn bytes(&self) -> &[u8] {
        &self.buffer[self.inner.clone()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{Generation, TaskStatus};
    use crate::store::json_file_bytes;

    fn state(tasks: usize, generation: Generation) -> State {
        crate::synth::SynthPlan::new("PLAN_splice_test", tasks)
            .completed(tasks / 2)
            .generation(generation)
            .state()
    }

    /// The splice's whole promise: the bytes of the whole state, for a change at every position.
    #[test]
    fn the_spliced_bytes_are_the_whole_states_serialization_at_every_position() {
        for (count, generation) in [1, 2, 3, 7]
            .into_iter()
            .flat_map(|n| [Generation::V1, Generation::V2, Generation::V5].map(|g| (n, g)))
        {
            let original = state(count, generation);
            for index in 0..count {
                let around = TasksAround::of(&original.tasks, index, 0).unwrap();
                let mut next = original.clone();
                next.tasks[index].status = TaskStatus::InProgress;
                next.tasks[index].started_at = Some("2026-06-09T14:00:00Z".into());
                next.updated_at = "2026-06-09T14:00:01Z".into();
                let spliced = around.state_bytes(&mut next).unwrap();
                assert_eq!(
                    String::from_utf8(spliced).unwrap(),
                    String::from_utf8(json_file_bytes(&next)).unwrap(),
                    "{count} tasks ({generation:?}), task at {index} changed"
                );
            }
        }
    }

    #[test]
    fn a_state_with_another_task_count_is_not_spliced() {
        let original = state(3, Generation::V5);
        let around = TasksAround::of(&original.tasks, 1, 0).unwrap();
        let mut fewer = original.clone();
        fewer.tasks.truncate(2);
        assert!(around.state_bytes(&mut fewer).is_none());
        let mut more = original.clone();
        more.tasks.push(original.tasks[2].clone());
        assert!(around.state_bytes(&mut more).is_none());
        assert!(TasksAround::of(&original.tasks, 3, 0).is_none());
    }
}
