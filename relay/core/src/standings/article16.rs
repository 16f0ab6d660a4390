//! C.07 Article 16: unplayed rounds. (Stub: being written.)
