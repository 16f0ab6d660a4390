//! Which relay this is: the name other relays, the console and `/health` know it by.

use std::sync::OnceLock;

/// This relay's name in logs, the console and `/health`: the machine and the process id.
pub fn instance_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| format!("{}:{}", host_name(), std::process::id()))
}

pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}
