//! `--cpus server=0,client=1,db=1`: each tier of a run on CPUs of its own, the way a
//! benchmark with three hosts gives the server, the client and the database each a machine.
//!
//! A process is pinned with `sched_setaffinity` on every one of its threads and of its
//! descendants' threads (PostgreSQL's postmaster and its backends): threads and processes
//! created later inherit their creator's CPUs, so a blocking pool's threads and a new
//! backend stay on their tier. What each tier got is read back from the kernel and recorded
//! (`settings.cpu_placement`).

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use bookstore_record::results::TierCpus;

/// A tier of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The stacks, the variants and the responder.
    Server,
    /// loadgen itself (and the database ceiling's stores, which run in it).
    Client,
    /// PostgreSQL.
    Db,
    /// The database latency relays; with `db` unless given CPUs of their own.
    Relay,
}

impl Tier {
    const ALL: [Tier; 4] = [Tier::Server, Tier::Client, Tier::Db, Tier::Relay];

    /// As `--cpus` and the results name it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Server => "server",
            Tier::Client => "client",
            Tier::Db => "db",
            Tier::Relay => "relay",
        }
    }
}

/// The CPUs asked for each tier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    tiers: Vec<(Tier, Vec<usize>)>,
}

impl Placement {
    /// `server=0,client=1,db=1`: tier=CPUs, comma-separated; CPUs are a number, a range
    /// `0-3`, or several joined by `+` (`0+2`). A tier not named runs on every CPU loadgen
    /// could use before it placed itself.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut tiers: Vec<(Tier, Vec<usize>)> = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, cpus) = part
                .split_once('=')
                .ok_or_else(|| format!("--cpus {part:?}: expected tier=cpus, e.g. server=0"))?;
            let tier =
                Tier::ALL.into_iter().find(|t| t.name() == name.trim()).ok_or_else(|| {
                    format!("--cpus {part:?}: the tiers are server, client, db and relay")
                })?;
            if tiers.iter().any(|(t, _)| *t == tier) {
                return Err(format!("--cpus: {} is named twice", tier.name()));
            }
            tiers.push((tier, parse_cpus(cpus).map_err(|e| format!("--cpus {part:?}: {e}"))?));
        }
        if tiers.is_empty() {
            return Err("--cpus: name at least one tier, e.g. server=0,client=1,db=1".into());
        }
        Ok(Self { tiers })
    }

    /// The CPUs asked for `tier` (the relays': theirs, else the database's).
    pub fn cpus(&self, tier: Tier) -> Option<&[usize]> {
        let find = |tier| self.tiers.iter().find(|(t, _)| *t == tier).map(|(_, c)| c.as_slice());
        match tier {
            Tier::Relay => find(Tier::Relay).or_else(|| find(Tier::Db)),
            other => find(other),
        }
    }

    /// Every CPU asked for is one this process may run on, or which is not.
    pub fn check_available(&self) -> Result<(), String> {
        let allowed = affinity(std::process::id())?;
        for (tier, cpus) in &self.tiers {
            if let Some(cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(format!(
                    "--cpus {}={cpu}: this machine lets loadgen run on CPUs {} only",
                    tier.name(),
                    list(&allowed)
                ));
            }
        }
        Ok(())
    }
}

/// `0`, `0-3`, `0+2+5-7`.
fn parse_cpus(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for piece in text.split('+').map(str::trim) {
        let number = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("{s:?} is not a CPU"));
        match piece.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (number(from)?, number(to)?);
                if from > to {
                    return Err(format!("{piece:?}: the range runs backwards"));
                }
                cpus.extend(from..=to);
            }
            None => cpus.push(number(piece)?),
        }
    }
    if let Some(&too_big) = cpus.iter().find(|&&c| c >= CpuSet::count()) {
        return Err(format!("CPU {too_big} is beyond what the kernel interface takes"));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// `0,1` for a reader.
fn list(cpus: &[usize]) -> String {
    cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// The CPUs `pid` (its main thread) may run on.
pub fn affinity(pid: u32) -> Result<Vec<usize>, String> {
    let set = sched_getaffinity(Pid::from_raw(pid as i32))
        .map_err(|e| format!("cannot read the CPUs of process {pid}: {e}"))?;
    Ok((0..CpuSet::count()).filter(|&cpu| set.is_set(cpu).unwrap_or(false)).collect())
}

/// Pins every thread of `pid` and of its descendants to `cpus`; what the kernel then
/// reports for `pid`, which must be `cpus`.
pub fn pin(pid: u32, cpus: &[usize]) -> Result<TierCpusOf, String> {
    pin_processes(&bookstore_client::procfs::process_tree(pid), cpus)?;
    check(pid, cpus)
}

/// Pins every thread of this process (every one: a test harness's other threads too, until
/// the run gives them back), not its children, to `cpus`: what the kernel then reports.
pub fn pin_own_threads(cpus: &[usize]) -> Result<TierCpusOf, String> {
    pin_processes(&[std::process::id()], cpus)?;
    check(std::process::id(), cpus)
}

fn pin_processes(processes: &[u32], cpus: &[usize]) -> Result<(), String> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu).map_err(|e| format!("CPU {cpu}: {e}"))?;
    }
    for &process in processes {
        for thread in bookstore_client::procfs::threads_of(process) {
            // A thread that ended meanwhile has nothing left to pin.
            match sched_setaffinity(Pid::from_raw(thread as i32), &set) {
                Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
                Err(e) => {
                    return Err(format!(
                        "cannot pin thread {thread} of process {process} to CPUs {}: {e}",
                        list(cpus)
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check(pid: u32, cpus: &[usize]) -> Result<TierCpusOf, String> {
    let got = affinity(pid)?;
    if got != cpus {
        return Err(format!(
            "process {pid} runs on CPUs {} after pinning to {}",
            list(&got),
            list(cpus)
        ));
    }
    Ok(TierCpusOf(got))
}

/// Gives this process's threads back the CPUs they had, when dropped: the client's
/// placement ends with the run, however the run ends.
pub struct GiveBack(pub Vec<usize>);

impl Drop for GiveBack {
    fn drop(&mut self) {
        if let Err(e) = pin_own_threads(&self.0) {
            eprintln!("loadgen: could not give this process its CPUs back: {e}");
        }
    }
}

/// The CPUs a pinned process reported.
pub struct TierCpusOf(pub Vec<usize>);

impl TierCpusOf {
    /// As the results record it, under `tier`'s name.
    pub fn record(self, tier: Tier) -> TierCpus {
        TierCpus { tier: tier.name().to_owned(), cpus: self.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_take_a_cpu_a_range_or_several_and_the_relays_follow_the_database() {
        let placement = Placement::parse("server=0, client=1-2, db=3+5").unwrap();
        assert_eq!(placement.cpus(Tier::Server), Some(&[0][..]));
        assert_eq!(placement.cpus(Tier::Client), Some(&[1, 2][..]));
        assert_eq!(placement.cpus(Tier::Db), Some(&[3, 5][..]));
        assert_eq!(placement.cpus(Tier::Relay), Some(&[3, 5][..]));
        let apart = Placement::parse("db=1,relay=0").unwrap();
        assert_eq!(apart.cpus(Tier::Relay), Some(&[0][..]));
        assert_eq!(apart.cpus(Tier::Server), None);
        for bad in ["", "server", "web=0", "server=x", "server=3-1", "db=0,db=1", "db=99999"] {
            assert!(Placement::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_pinned_process_and_its_children_report_the_cpus_asked() {
        let allowed = affinity(std::process::id()).unwrap();
        let one = vec![*allowed.last().unwrap()];
        // A shell with a child of its own: both are pinned, and what is read back is asked.
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .expect("sh runs");
        let pid = shell.id();
        let child = (0..200)
            .find_map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(10));
                bookstore_client::procfs::process_tree(pid).get(1).copied()
            })
            .expect("the shell started its child");
        let pinned = pin(pid, &one);
        let child_cpus = affinity(child);
        let _ = shell.kill();
        let _ = std::process::Command::new("kill").arg(child.to_string()).status();
        let _ = shell.wait();
        assert_eq!(pinned.unwrap().record(Tier::Db).cpus, one);
        assert_eq!(child_cpus.unwrap(), one);
    }
}
