//! One flag vocabulary: a long flag name means one thing, in one unit, in every command that
//! takes it, and docs/src/flags.md lists every flag with the commands that take it.

use std::collections::{BTreeMap, BTreeSet};

use clap::{CommandFactory, Parser};

use super::Cli;

/// Where a flag occurs: the command (`run` for the default command, `baseline save`...), its
/// value name (empty for a switch) and its help text.
#[derive(Debug, Clone)]
struct Use {
    command: String,
    value: String,
    help: String,
}

/// Every long flag of the command tree (hidden aliases are not flags), with its uses.
fn tree() -> BTreeMap<String, Vec<Use>> {
    let mut flags = BTreeMap::new();
    let mut cli = Cli::command();
    cli.build();
    walk(&cli, "", &mut flags);
    flags
}

fn walk(cmd: &clap::Command, path: &str, flags: &mut BTreeMap<String, Vec<Use>>) {
    let name = if path.is_empty() { "run".to_string() } else { path.to_string() };
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "version") || arg.is_hide_set() {
            continue;
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        let value = match arg.get_value_names() {
            Some(names) if takes_value => names.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" "),
            _ => String::new(),
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        flags.entry(format!("--{long}")).or_insert_with(Vec::new).push(Use { command: name.clone(), value, help });
    }
    for sub in cmd.get_subcommands() {
        let sub_path = if path.is_empty() { sub.get_name().to_string() } else { format!("{path} {}", sub.get_name()) };
        walk(sub, &sub_path, flags);
    }
}

/// Value names a flag may take in different commands, with the reason: `--device` names one GPU
/// where a command measures one, a selection where it measures several.
const SEVERAL_FORMS: &[(&str, &[&str])] = &[("--device", &["N", "N|all|N,N"])];

/// Words that name a unit; a flag's help may name at most one of each group across commands.
const UNIT_WORDS: &[&[&str]] = &[&["percent", "fraction"], &["seconds", "milliseconds"]];

#[test]
fn every_flag_takes_one_kind_of_value_everywhere() {
    for (flag, uses) in tree() {
        let values: BTreeSet<&str> = uses.iter().map(|u| u.value.as_str()).collect();
        if values.len() == 1 {
            continue;
        }
        let allowed = SEVERAL_FORMS.iter().find(|(f, _)| *f == flag).map(|(_, v)| v).copied().unwrap_or_default();
        assert!(
            values.iter().all(|v| allowed.contains(v)),
            "{flag} takes {values:?} in {:?}",
            uses.iter().map(|u| (&u.command, &u.value)).collect::<Vec<_>>()
        );
    }
}

/// The lower-case words of a help text.
fn words(help: &str) -> BTreeSet<String> {
    help.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

#[test]
fn every_flag_names_one_unit_everywhere() {
    for (flag, uses) in tree() {
        for group in UNIT_WORDS {
            let named: BTreeSet<&str> =
                uses.iter().flat_map(|u| group.iter().copied().filter(|w| words(&u.help).contains(*w))).collect();
            assert!(named.len() <= 1, "{flag} is in {named:?} in different commands");
        }
    }
}

#[test]
fn min_effect_is_a_percentage_in_every_command() {
    let uses = &tree()["--min-effect"];
    assert!(uses.len() >= 2);
    for u in uses {
        assert_eq!(u.value, "PERCENT", "{}", u.command);
        assert!(u.help.contains("percent"), "{}: {}", u.command, u.help);
    }
    for args in [&["fleet", "x", "--min-effect", "5%"][..], &["history", "--min-effect", "5", "--db", "x"]] {
        let cli = Cli::try_parse_from(std::iter::once("cargo-gpubench").chain(args.iter().copied())).unwrap();
        let v = match cli.command {
            Some(super::Command::Fleet(f)) => f.min_effect,
            Some(super::Command::History(h)) => h.min_effect,
            other => panic!("{other:?}"),
        };
        assert_eq!(v, 5.0, "{args:?}");
    }
}

#[test]
fn old_flag_names_still_parse() {
    let parse = |args: &[&str]| Cli::try_parse_from(std::iter::once("cargo-gpubench").chain(args.iter().copied()));
    match parse(&["chipmap", "r.json", "--z", "4"]).unwrap().command {
        Some(super::Command::Chipmap(c)) => assert_eq!(c.z_limit, 4.0),
        other => panic!("{other:?}"),
    }
    match parse(&["fleet", "d", "--save-baseline", "c.json"]).unwrap().command {
        Some(super::Command::Fleet(f)) => assert_eq!(f.save_envelope.unwrap().to_str(), Some("c.json")),
        other => panic!("{other:?}"),
    }
}

/// The rows of the table in docs/src/flags.md: flag -> (value cell, commands).
fn documented() -> BTreeMap<String, (String, BTreeSet<String>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/flags.md");
    let text = std::fs::read_to_string(path).expect("docs/src/flags.md");
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `--")) {
        // `\|` is a bar inside a cell.
        let line = line.replace("\\|", "\u{0}");
        let cells: Vec<String> = line.trim_matches('|').split('|').map(|c| c.trim().replace('\u{0}', "|")).collect();
        assert_eq!(cells.len(), 4, "a row of four cells: {line}");
        let flag = cells[0].trim_matches('`').to_string();
        let value = cells[2].trim_matches('`').to_string();
        let commands = cells[3].split(',').map(|c| c.trim().trim_matches('`').to_string()).collect();
        assert!(rows.insert(flag.clone(), (value, commands)).is_none(), "{flag} listed twice");
    }
    rows
}

#[test]
fn the_flags_page_lists_every_flag_with_its_commands() {
    let doc = documented();
    let tree = tree();
    let mut missing = Vec::new();
    for (flag, uses) in &tree {
        let commands: BTreeSet<String> = uses.iter().map(|u| u.command.clone()).collect();
        let values: BTreeSet<&str> = uses.iter().map(|u| u.value.as_str()).collect();
        let value = if values.iter().all(|v| v.is_empty()) {
            "-".to_string()
        } else {
            values.into_iter().collect::<Vec<_>>().join(" or ")
        };
        let row = format!(
            "| `{flag}` | {} | `{value}` | {} |",
            uses[0].help,
            commands.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
        );
        match doc.get(flag) {
            Some((v, c)) if *v == value.trim_matches('`') && *c == commands => {}
            _ => missing.push(row),
        }
    }
    let stale: Vec<&String> = doc.keys().filter(|f| !tree.contains_key(*f)).collect();
    assert!(missing.is_empty(), "flags.md lacks or misstates these rows:\n{}", missing.join("\n"));
    assert!(stale.is_empty(), "flags.md lists flags no command takes: {stale:?}");
}
