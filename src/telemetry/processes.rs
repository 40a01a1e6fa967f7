//! Who else uses the GPU: NVML's compute and graphics process lists and per-process
//! utilisation, polled with the telemetry, and the processes that are not this run's.
//!
//! This run is the bench process and the `cargo gpubench` process that started it (its
//! parent). NVML reports pids as the host sees them; in a container those are of another pid
//! namespace and match none of ours. Then a listed process whose pid this process can see in
//! `/proc` still counts as foreign, and of the pids it cannot see, one is taken to be this
//! run's own (it holds a CUDA context while it measures): two or more such pids mean at least
//! one foreign process, recorded with a note rather than guessed away.

use std::collections::BTreeMap;
use std::time::Instant;

use nvml_wrapper::Device;
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::results::ForeignProcess;

/// One process NVML listed on the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// Pid as NVML reports it.
    pub pid: u32,
    /// GPU memory it holds, MiB, when NVML says.
    pub used_mib: Option<f64>,
    /// SM utilisation NVML attributed to it since the previous poll, %, when NVML says.
    pub sm_util_pct: Option<u32>,
}

/// One poll of the process lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessReading {
    /// When it was taken.
    pub at: Instant,
    /// The processes, or why NVML could not list them.
    pub listed: Result<Vec<Listed>, String>,
}

/// The pids of this run: this process and its parent (the CLI that started the bench).
pub fn own_pids() -> Vec<u32> {
    vec![std::process::id(), std::os::unix::process::parent_id()]
}

/// A process's name from `/proc/<pid>/comm`, when this process can see it.
pub fn proc_name(pid: u32) -> Option<String> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Reads the compute and graphics process lists and the per-process SM utilisation since
/// `util_since` (NVML's microsecond timestamp; 0 for everything it keeps). Returns the
/// reading and the newest utilisation timestamp seen.
pub fn read(device: &Device<'_>, util_since: u64) -> (ProcessReading, u64) {
    let at = Instant::now();
    let compute = device.running_compute_processes();
    let graphics = device.running_graphics_processes();
    let mut by_pid: BTreeMap<u32, Listed> = BTreeMap::new();
    let mut errors = Vec::new();
    for list in [compute, graphics] {
        match list {
            Ok(list) => {
                for p in list {
                    let used = match p.used_gpu_memory {
                        UsedGpuMemory::Used(bytes) => Some(bytes as f64 / (1024.0 * 1024.0)),
                        UsedGpuMemory::Unavailable => None,
                    };
                    let e = by_pid.entry(p.pid).or_insert(Listed { pid: p.pid, used_mib: None, sm_util_pct: None });
                    e.used_mib = max_opt(e.used_mib, used);
                }
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut newest = util_since;
    if let Ok(samples) = device.process_utilization_stats(util_since) {
        for s in samples {
            newest = newest.max(s.timestamp);
            if let Some(e) = by_pid.get_mut(&s.pid) {
                e.sm_util_pct = Some(e.sm_util_pct.unwrap_or(0).max(s.sm_util));
            }
        }
    }
    let listed = if errors.len() == 2 {
        Err(format!("NVML cannot list the GPU's processes ({})", errors[0]))
    } else {
        Ok(by_pid.into_values().collect())
    };
    (ProcessReading { at, listed }, newest)
}

/// The processes of `listed` that are not this run's (`ours`), named through `name_of`.
/// `measuring` says that this run holds a CUDA context, so that it must be in the list.
pub fn foreign(
    listed: &[Listed],
    ours: &[u32],
    measuring: bool,
    name_of: impl Fn(u32) -> Option<String>,
) -> Vec<ForeignProcess> {
    let same_namespace = listed.iter().any(|p| ours.contains(&p.pid));
    let others: Vec<&Listed> = listed.iter().filter(|p| !ours.contains(&p.pid)).collect();
    let named: Vec<(&Listed, Option<String>)> = others.iter().map(|p| (*p, name_of(p.pid))).collect();
    let unseen = named.iter().filter(|(_, n)| n.is_none()).count();
    // Measuring without our own pid in the list, one pid we cannot see is presumably ours.
    let unseen_foreign = same_namespace || !measuring || unseen >= 2;
    named
        .into_iter()
        .filter(|(_, name)| name.is_some() || unseen_foreign)
        .map(|(p, name)| ForeignProcess {
            pid: p.pid,
            note: (!same_namespace && name.is_none())
                .then(|| format!("pid of another pid namespace: one of the {unseen} such processes may be this run")),
            name,
            used_mib: p.used_mib,
            sm_util_pct: p.sm_util_pct,
        })
        .collect()
}

/// The foreign processes of the readings within `[start, end]` (else the one nearest its
/// middle), merged per pid, and why the list was unknown if no reading could list it.
pub fn window(
    readings: &[ProcessReading],
    start: Instant,
    end: Instant,
    ours: &[u32],
    name_of: &dyn Fn(u32) -> Option<String>,
) -> (Vec<ForeignProcess>, Option<String>) {
    let inside: Vec<&ProcessReading> = readings.iter().filter(|r| r.at >= start && r.at <= end).collect();
    let chosen: Vec<&ProcessReading> = if inside.is_empty() {
        let mid = start + end.saturating_duration_since(start) / 2;
        readings.iter().min_by_key(|r| if r.at > mid { r.at - mid } else { mid - r.at }).into_iter().collect()
    } else {
        inside
    };
    let mut merged = Vec::new();
    let mut unknown = None;
    let mut any_listed = false;
    for r in chosen {
        match &r.listed {
            Ok(list) => {
                any_listed = true;
                merge(&mut merged, foreign(list, ours, true, name_of));
            }
            Err(why) => unknown = Some(why.clone()),
        }
    }
    if readings.is_empty() {
        unknown = Some("no process list was read".into());
    }
    (merged, if any_listed { None } else { unknown })
}

/// Adds `new` to `into`, one entry per pid with the largest memory and utilisation seen.
pub fn merge(into: &mut Vec<ForeignProcess>, new: impl IntoIterator<Item = ForeignProcess>) {
    for p in new {
        match into.iter_mut().find(|q| q.pid == p.pid) {
            Some(q) => {
                q.used_mib = max_opt(q.used_mib, p.used_mib);
                q.sm_util_pct = q.sm_util_pct.max(p.sm_util_pct);
                q.name = q.name.take().or(p.name);
                q.note = q.note.take().or(p.note);
            }
            None => into.push(p),
        }
    }
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// The foreign processes on the GPU with this UUID now, for a check before this run opens
/// it; an error says why NVML cannot tell.
pub fn foreign_now(uuid: &str) -> Result<Vec<ForeignProcess>, String> {
    let nvml = nvml_wrapper::Nvml::init().map_err(|e| format!("NVML unavailable: {e}"))?;
    let device = nvml.device_by_uuid(uuid).map_err(|e| format!("NVML does not know GPU {uuid}: {e}"))?;
    let (reading, _) = read(&device, 0);
    Ok(foreign(&reading.listed?, &own_pids(), false, proc_name))
}

/// "pid 4242, python3, 874 MiB, SM 69 %" ("unknown name", "? MiB" where not known).
pub fn describe(p: &ForeignProcess) -> String {
    let mut s = format!("pid {}, {}", p.pid, p.name.as_deref().unwrap_or("unknown name"));
    match p.used_mib {
        Some(m) => s.push_str(&format!(", {m:.0} MiB")),
        None => s.push_str(", ? MiB"),
    }
    if let Some(u) = p.sm_util_pct {
        s.push_str(&format!(", SM {u} %"));
    }
    s
}

/// "another process (pid 4242, python3, 874 MiB, SM 69 %)" or "other processes (...; ...)".
pub fn describe_all(ps: &[ForeignProcess]) -> String {
    let each: Vec<String> = ps.iter().map(describe).collect();
    if ps.len() == 1 {
        format!("another process ({})", each[0])
    } else {
        format!("other processes ({})", each.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn listed(pid: u32, mib: f64) -> Listed {
        Listed { pid, used_mib: Some(mib), sm_util_pct: Some(69) }
    }

    fn names(pid: u32) -> Option<String> {
        match pid {
            10 | 11 => Some("ours".into()),
            4242 => Some("python3".into()),
            _ => None,
        }
    }

    #[test]
    fn our_own_processes_are_not_foreign() {
        assert!(foreign(&[listed(10, 500.0), listed(11, 300.0)], &[10, 11], true, names).is_empty());
    }

    #[test]
    fn another_process_in_our_namespace_is_named() {
        let f = foreign(&[listed(10, 500.0), listed(4242, 874.0)], &[10, 11], true, names);
        assert_eq!(f.len(), 1);
        assert_eq!(describe(&f[0]), "pid 4242, python3, 874 MiB, SM 69 %");
        assert_eq!(f[0].note, None);
        // Our pid is listed, so even a pid we cannot see is another process.
        let f = foreign(&[listed(10, 500.0), listed(777, 10.0)], &[10, 11], true, names);
        assert_eq!(describe_all(&f), "another process (pid 777, unknown name, 10 MiB, SM 69 %)");
    }

    #[test]
    fn pids_of_another_namespace_are_flagged_only_when_one_cannot_be_ours() {
        // One pid we cannot see and ours missing: that is this run, seen from the host.
        assert!(foreign(&[listed(90001, 500.0)], &[10, 11], true, names).is_empty());
        // Before this run opens the GPU (--exclusive), every other pid is someone else's.
        assert_eq!(foreign(&[listed(90001, 500.0)], &[10, 11], false, names).len(), 1);
        // Two: at least one is someone else's; both are recorded with a note.
        let f = foreign(&[listed(90001, 500.0), listed(90002, 874.0)], &[10, 11], true, names);
        assert_eq!(f.len(), 2);
        assert!(f[0].note.as_deref().unwrap().contains("one of the 2 such processes may be this run"));
        // A visible foreign process counts even without our own pid in the list.
        let f = foreign(&[listed(90001, 500.0), listed(4242, 874.0)], &[10, 11], true, names);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pid, 4242);
    }

    #[test]
    fn a_window_merges_its_readings_and_says_when_the_list_is_unknown() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let readings = vec![
            ProcessReading { at: at(0), listed: Ok(vec![listed(10, 500.0)]) },
            ProcessReading { at: at(50), listed: Ok(vec![listed(10, 500.0), listed(4242, 600.0)]) },
            ProcessReading { at: at(100), listed: Ok(vec![listed(10, 500.0), listed(4242, 874.0)]) },
            ProcessReading { at: at(150), listed: Err("NVML cannot list the GPU's processes (Not supported)".into()) },
        ];
        let (f, unknown) = window(&readings, at(40), at(110), &[10, 11], &names);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].used_mib, Some(874.0));
        assert_eq!(unknown, None);
        let (f, _) = window(&readings, at(1), at(2), &[10, 11], &names);
        assert!(f.is_empty(), "the reading nearest a short window is taken");
        let (f, unknown) = window(&readings, at(140), at(160), &[10, 11], &names);
        assert!(f.is_empty());
        assert_eq!(unknown.as_deref(), Some("NVML cannot list the GPU's processes (Not supported)"));
        let (_, unknown) = window(&[], at(0), at(1), &[10, 11], &names);
        assert!(unknown.is_some());
    }
}
