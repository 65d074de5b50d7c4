//! Loop contracts (issue #7): the `.ak-loop/` phase artifacts a worker leaves in its worktree
//! and the two-list definition of done a harness judges (seeds 000, 001 and 004).
