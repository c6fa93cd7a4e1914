//! CPU time and memory of processes, from `/proc`.

use std::fs;

/// Clock ticks per second in `/proc/<pid>/stat` (Linux's USER_HZ, fixed at 100 for this
/// interface whatever the kernel's internal tick rate): a window's CPU is known to one tick.
pub const TICKS_PER_SECOND: f64 = 100.0;

/// User + system CPU seconds `pid` has used so far; `None` if it is gone.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SECOND)
}

/// CPU seconds of this process.
pub fn own_cpu_seconds() -> f64 {
    cpu_seconds(std::process::id()).unwrap_or(0.0)
}

/// `pid` and every process descending from it.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(parent) = parent_of(child) {
                parents.push((child, parent));
            }
        }
    }
    let mut tree = vec![pid];
    let mut index = 0;
    while index < tree.len() {
        let parent = tree[index];
        tree.extend(parents.iter().filter(|(_, p)| *p == parent).map(|(c, _)| *c));
        index += 1;
    }
    tree
}

/// The threads (task ids) of `pid`; empty when it is gone.
pub fn threads_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    entries.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds of `pid` and its descendants, the exited ones included (PostgreSQL: the
/// postmaster and its backends, also those that closed during a window).
///
/// Each process counts its own time plus that of its waited-for children (`cutime`,
/// `cstime`): when a backend exits, the postmaster reaps it and its time moves into the
/// postmaster's children fields, so the sum never drops. Summing live processes only lost
/// an exiting backend's whole history and could make a window's PostgreSQL CPU negative.
pub fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let tree = process_tree(pid);
    let own = ticks_with_children(pid)?;
    // Summed in whole ticks: float sums in another order would differ in the last bit.
    let ticks = own + tree.iter().skip(1).filter_map(|p| ticks_with_children(*p)).sum::<u64>();
    Some(ticks as f64 / TICKS_PER_SECOND)
}

/// utime + stime + cutime + cstime of `pid` (its own CPU and that of its exited, waited-for
/// children), in clock ticks.
fn ticks_with_children(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 to 17 of proc(5).
    fields.get(11..15)?.iter().map(|f| f.parse::<u64>().ok()).sum()
}

/// Peak resident memory of `pid` (`VmHWM`), bytes.
pub fn peak_rss_bytes(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:").map(|kib| kib * 1024)
}

/// Resident memory of `pid` now (`VmRSS`), bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:").map(|kib| kib * 1024)
}

/// Threads of `pid` now.
pub fn threads(pid: u32) -> Option<u64> {
    status_kib(pid, "Threads:")
}

/// Open file descriptors of `pid` now (sockets, files, pipes, epoll instances…).
pub fn open_fds(pid: u32) -> Option<u64> {
    Some(fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64)
}

/// The first number on `/proc/<pid>/status`'s line starting with `key`.
fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
}

/// Resets `pid`'s peak resident memory to its current size, so the next read is the peak
/// of what follows (Linux ≥ 4.0; needs the right to write the process's `clear_refs`).
pub fn reset_peak_rss(pid: u32) -> bool {
    fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_cpu_time_memory_and_is_its_own_tree_root() {
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(30) {}
        assert!(own_cpu_seconds() > 0.0);
        let me = std::process::id();
        assert!(peak_rss_bytes(me).unwrap() > 1024 * 1024);
        assert!(rss_bytes(me).unwrap() <= peak_rss_bytes(me).unwrap());
        assert!(threads(me).unwrap() >= 1);
        // Children of their own (this process's other tests open and close files
        // meanwhile), which inherit whatever descriptors the test harness leaves open: one
        // with three more than the other.
        let sleeper = |script: &str| {
            let child = std::process::Command::new("sh").args(["-c", script]).spawn().unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap_or_default()
                != "sleep\n"
            {
                assert!(std::time::Instant::now() < deadline, "{script} never ran sleep");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            child
        };
        let mut plain = sleeper("exec sleep 5");
        let mut more = sleeper("exec 7</dev/null 8</dev/null 9</dev/null; exec sleep 5");
        let counts = (open_fds(plain.id()), open_fds(more.id()), threads(more.id()));
        for child in [&mut plain, &mut more] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        let (Some(plain_fds), Some(more_fds), threads_of_child) = counts else {
            panic!("no counts: {counts:?}")
        };
        assert_eq!(more_fds, plain_fds + 3, "three more open files");
        assert_eq!(threads_of_child, Some(1));
        assert_eq!(process_tree(std::process::id())[0], std::process::id());
        assert!(cpu_seconds(u32::MAX).is_none());
    }

    #[test]
    fn children_are_part_of_the_tree() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let tree = process_tree(std::process::id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(tree.contains(&child.id()), "{tree:?}");
    }

    #[test]
    fn a_child_that_exits_keeps_its_cpu_in_the_tree() {
        let me = std::process::id();
        let mut child =
            std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        // Until the child has used a visible amount of CPU (however fast this machine is).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while cpu_seconds(child.id()).unwrap_or(0.0) < 0.2 {
            assert!(std::time::Instant::now() < deadline, "the child never ran");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let child_cpu = cpu_seconds(child.id()).unwrap();
        let before = tree_cpu_seconds(me).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let after = tree_cpu_seconds(me).unwrap();
        // Reaped, its time moved into this process's children fields: nothing is lost (the
        // old live-only sum dropped by the child's whole CPU time here).
        assert!(!process_tree(me).contains(&child.id()));
        assert!(
            after >= before,
            "tree CPU dropped from {before} to {after} (child had {child_cpu})"
        );
    }
}
