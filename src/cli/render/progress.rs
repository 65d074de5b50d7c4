//! Progress of long work over many plans (`verify --all`), drawn on stderr only when stderr is
//! a terminal: never in a pipe, a log or a CI job, and never with `--quiet`.

use crate::commands::verify::ProgressSink;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Fewer plans than this finish before a bar would help.
const WORTH_SHOWING: usize = 50;

/// A progress bar, or nothing where it would only be noise.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar on stderr when it is a terminal and `quiet` is not asked for.
    pub fn for_terminal(quiet: bool) -> Bar {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} plans verified") {
                bar.set_style(style);
            }
            bar
        });
        Bar { bar }
    }
}

impl ProgressSink for Bar {
    fn start(&self, plans: usize) {
        if let Some(bar) = &self.bar {
            match plans >= WORTH_SHOWING {
                true => {
                    bar.set_length(plans as u64);
                    // Drawn at once: the first redraw is otherwise up to a tick away.
                    bar.tick();
                }
                false => bar.set_draw_target(ProgressDrawTarget::hidden()),
            }
        }
    }

    fn plan_done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
