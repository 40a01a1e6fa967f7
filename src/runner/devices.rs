//! Several GPUs of one node in one command (`--device all`, `--device 0,2,5`): which GPUs, the
//! command line of each GPU's own process, and the exit code of the whole.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use crate::error::{Error, Result};
use crate::protocol::ENV_ORDINAL;

/// Which GPUs `--device` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelection {
    /// One CUDA ordinal (`--device 0`): measured in this process, as always.
    One(usize),
    /// Every visible GPU (`--device all`): one process per GPU.
    All,
    /// These ordinals (`--device 0,2,5`): one process per GPU.
    List(Vec<usize>),
}

impl DeviceSelection {
    /// Parses `all`, `N` or `N,N,...` (no duplicates); the error is one line.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(DeviceSelection::All);
        }
        let mut list = Vec::new();
        for part in t.split(',') {
            let n: usize = part.trim().parse().map_err(|_| {
                format!("`{text}` is not a GPU selection: give `all`, an ordinal such as 0, or a list such as 0,2,5")
            })?;
            if list.contains(&n) {
                return Err(format!("GPU {n} is listed twice in `{text}`"));
            }
            list.push(n);
        }
        Ok(if !t.contains(',') { DeviceSelection::One(list[0]) } else { DeviceSelection::List(list) })
    }

    /// The ordinal of a single-GPU selection.
    pub fn single(&self) -> Option<usize> {
        match self {
            DeviceSelection::One(n) => Some(*n),
            _ => None,
        }
    }

    /// The ordinals, given how many GPUs the driver sees; an ordinal beyond them is a usage
    /// error.
    pub fn resolve(&self, visible: usize) -> Result<Vec<usize>> {
        let list = match self {
            DeviceSelection::One(n) => vec![*n],
            DeviceSelection::All => (0..visible).collect(),
            DeviceSelection::List(l) => l.clone(),
        };
        if let Some(bad) = list.iter().find(|&&n| n >= visible) {
            return Err(Error::Usage(format!("there is no GPU {bad}: the driver sees {visible} (0-{})", visible - 1)));
        }
        Ok(list)
    }
}

impl std::str::FromStr for DeviceSelection {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Self::parse(s)
    }
}

/// Flags whose value this module replaces in a GPU's own command line.
const REPLACED: [&str; 4] = ["--device", "--output", "-o", "--archive"];

/// The command line of one GPU's process: the parent's arguments (without the program name)
/// with `--device`, `--output` and `--archive` (in any of the forms `--flag V`, `--flag=V`,
/// `-oV`) replaced by this GPU's ordinal, its results file, and the unpacked archive.
pub fn child_args(parent: &[OsString], ordinal: usize, output: &Path, archive: Option<&Path>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for a in parent {
        if skip_next {
            skip_next = false;
            continue;
        }
        let s = a.to_string_lossy();
        if REPLACED.contains(&s.as_ref()) {
            skip_next = true;
            continue;
        }
        if REPLACED.iter().any(|f| f.starts_with("--") && s.starts_with(&format!("{f}=")))
            || (s.starts_with("-o") && !s.starts_with("--") && s.len() > 2)
        {
            continue;
        }
        out.push(a.clone());
    }
    out.push("--device".into());
    out.push(ordinal.to_string().into());
    out.push("--output".into());
    out.push(output.as_os_str().to_owned());
    if let Some(a) = archive {
        out.push("--archive".into());
        out.push(a.as_os_str().to_owned());
    }
    out
}

/// Gives a child process GPU `uuid` alone: `CUDA_VISIBLE_DEVICES=<uuid>`, so that the child and
/// every bench process it starts initialise one GPU rather than all of the node's (CUDA's
/// initialisation of every visible GPU in each of a node's processes made a run on several GPUs
/// slower than on one), and [`ENV_ORDINAL`] so that its results still carry the ordinal the
/// parent knows the GPU by. The child then measures `--device 0`.
pub fn isolate<'c>(cmd: &'c mut Command, uuid: &str, ordinal: usize) -> &'c mut Command {
    cmd.env("CUDA_VISIBLE_DEVICES", uuid).env(ENV_ORDINAL, ordinal.to_string())
}

/// A results file name for GPU `uuid`: "GPU-xxxxxxxx-....json".
pub fn results_file_name(uuid: &str) -> String {
    let safe: String = uuid.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{safe}.json")
}

/// The exit code of a multi-GPU run: the highest of the GPUs' codes (0 only when every GPU's
/// run exited 0).
pub fn worst_exit_code(codes: &[i32]) -> i32 {
    codes.iter().copied().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn selections_parse_and_resolve() {
        assert_eq!(DeviceSelection::parse("all"), Ok(DeviceSelection::All));
        assert_eq!(DeviceSelection::parse("3"), Ok(DeviceSelection::One(3)));
        assert_eq!(DeviceSelection::parse("0,2,5"), Ok(DeviceSelection::List(vec![0, 2, 5])));
        assert!(DeviceSelection::parse("0,0").unwrap_err().contains("twice"));
        assert!(DeviceSelection::parse("gpu1").is_err());
        assert!(DeviceSelection::parse("").is_err());
        assert_eq!(DeviceSelection::All.resolve(2).unwrap(), vec![0, 1]);
        assert_eq!(DeviceSelection::List(vec![0, 2]).resolve(3).unwrap(), vec![0, 2]);
        let e = DeviceSelection::List(vec![0, 5]).resolve(2).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::USAGE);
        assert!(e.to_string().contains("no GPU 5"));
    }

    #[test]
    fn child_command_lines_replace_device_output_and_archive() {
        let parent = os(&["gpubench", "--device", "all", "--quick", "-o", "out", "--archive=a.tar.gz", "lat"]);
        let got = child_args(&parent, 2, Path::new("out/GPU-1.json"), Some(Path::new("unpacked")));
        let want =
            os(&["gpubench", "--quick", "lat", "--device", "2", "--output", "out/GPU-1.json", "--archive", "unpacked"]);
        assert_eq!(got, want);
        let got = child_args(&os(&["--device=0,1", "-oX", "--output=Y"]), 0, Path::new("r.json"), None);
        assert_eq!(got, os(&["--device", "0", "--output", "r.json"]));
    }

    #[test]
    fn the_worst_code_wins() {
        assert_eq!(worst_exit_code(&[0, 0]), 0);
        assert_eq!(worst_exit_code(&[0, 1, 0]), 1);
        assert_eq!(worst_exit_code(&[3, 1]), 3);
        assert_eq!(worst_exit_code(&[]), 0);
    }
}
