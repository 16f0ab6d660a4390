//! Ordering by points then each code. (Stub: being written.)
