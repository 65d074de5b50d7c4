//! The hook-enforced file contract (issue #8): files declared up front, edits recorded by a
//! ledger, and the declaration checked against disk and ledger at stop (seed 002).
