//! `charly check live`, `charly check box`, `box.test`, `box.pull`: check plans against
//! containers, and a box's base image refreshed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::check::{self, CHECK_LABEL, Endpoints, Plan, Report, RunOptions, Vars, Venue};
use crate::cli::{BoxTestArgs, CheckBoxArgs, LiveArgs};
use crate::context::{Ctx, Scope};
use crate::engine::{Engine, Target};
use crate::error::CommandError;
use crate::project::{Missing, PROJECT_FILE, Project};
use crate::resolve::{self, PodmanCli};

/// The checks of box `name` by section: its candies' files (`candy`), then charly.yml
/// (`box`). Read only; a missing candy file has no checks.
pub(super) fn box_sections(project: &Project, name: &str) -> Result<Plan, CommandError> {
    let resolved = project.resolve_box(name)?;
    let root = project.root();
    let mut plan = Plan::default();
    let candy_files = resolved.candies.iter().map(|c| (Project::candy_file(&c.name), "candy"));
    for (file, section) in candy_files.chain([(PathBuf::from(PROJECT_FILE), "box")]) {
        let path = root.join(&file);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CommandError::Usage(format!("cannot read {}: {e}", path.display())))?;
            plan.merge(Plan::parse(&text, &file.display().to_string()).in_section(section));
        }
    }
    Ok(plan)
}

/// The deploy file's `plan:` of deployment `key` (section `deploy`), empty without one.
fn deploy_section(key: &str) -> Result<Plan, CommandError> {
    let path = crate::deployfile::deploy_path();
    let file = crate::deployfile::DeployFile::load(&path).map_err(CommandError::from)?;
    let json = file.json();
    let entries = json.get("deploy").and_then(|d| d.get(key)).and_then(|n| n.get("plan"));
    let source = format!("{} (deploy.{key}.plan)", path.display());
    Ok(match entries.and_then(Value::as_array) {
        Some(list) => Plan::from_entries(list, &source).in_section("deploy"),
        None => Plan::default(),
    })
}

/// `charly check live <box>`: candy, box and deploy checks against the running container.
pub(super) fn live(args: &LiveArgs, ctx: &Ctx, project: &Project) -> Result<Report, CommandError> {
    let target = Target::new(&args.r#box, args.instance.as_deref())?;
    match (&args.junit, ctx.scope()) {
        (Some(junit), Scope::Served) => junit_replaceable(project, junit)?,
        (Some(junit), Scope::Terminal) => {
            crate::project::refuse_git_path(&project.root().join(junit)).map_err(super::named("junit"))?;
        }
        (None, _) => {}
    }
    let mut plan = box_sections(project, &args.r#box)?;
    plan.merge(deploy_section(&target.key())?);
    let engine = Engine::podman(ctx.cancel_token());
    let inspect = ctx.block(running_inspect(&engine, &target))?;
    let vars = Vars::from_inspect(&inspect, &args.r#box, args.instance.as_deref());
    let image = project.resolve_box(&args.r#box).ok().map(|b| b.image);
    let endpoints: Endpoints = resolve::box_endpoints(
        &PodmanCli::default(),
        &args.r#box,
        args.instance.as_deref(),
        image.as_deref(),
    )
    .into();
    let options = RunOptions {
        filter: args.filter.clone(),
        venue: Venue::Container { engine, container: target.container.clone() },
        vars,
        root: Some(ctx.root().to_owned()),
        confined: ctx.scope() == Scope::Served,
        ..RunOptions::default()
    };
    let report = ctx.block(check::live(&plan, &endpoints, options, None))?;
    write_junit(ctx, project, args.junit.as_deref(), &report)?;
    Ok(report)
}

/// `podman inspect` of `target`'s container, which must be running.
async fn running_inspect(engine: &Engine, target: &Target) -> Result<Value, CommandError> {
    let out = engine.output(&["inspect", "--type", "container", &target.container], None, false).await?;
    let parsed: Option<Value> = serde_json::from_str(&out.stdout).ok();
    let first = parsed.as_ref().and_then(|v| v.get(0)).filter(|_| out.status == 0);
    let Some(first) = first else {
        return Err(crate::engine::no_container(target).into());
    };
    // Another box's or instance's container of that name (or one charly did not create) is
    // not this box to check.
    let labels: std::collections::BTreeMap<String, String> = first
        .pointer("/Config/Labels")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
        .unwrap_or_default();
    let owner = crate::engine::Owner::of(&labels, target, true);
    if owner != crate::engine::Owner::Ours {
        return Err(crate::engine::claim::claimed("container", &target.container, target, &owner).into());
    }
    if first.pointer("/State/Running").and_then(Value::as_bool) != Some(true) {
        let state = first.pointer("/State/Status").and_then(Value::as_str).unwrap_or("not running");
        return Err(CommandError::Usage(format!(
            "container {} is {state}, not running: start it with `charly start {}`",
            target.container,
            crate::engine::start_args(target)
        )));
    }
    Ok(parsed.unwrap_or(Value::Null))
}

/// `charly check box <box>`: the candy and box checks, each in a disposable container of the
/// box's built image.
pub(super) fn check_box(args: &CheckBoxArgs, ctx: &Ctx, project: &Project) -> Result<Report, CommandError> {
    // A read-only tool changes nothing: as one, check.box writes no report file (it created
    // files and directories on a `--read-only` server: trial 30, M3). `check.run` and
    // `check.live`, destructive, write theirs.
    if args.junit.is_some() && ctx.scope() == Scope::Served {
        return Err(CommandError::Usage(
            "argument `junit`: check.box is a read-only tool and, as one, writes no file; the results are \
             in its result (structuredContent), or run `charly check box BOX --junit FILE` on a terminal"
                .into(),
        ));
    }
    if let Some(junit) = &args.junit {
        crate::project::refuse_git_path(&project.root().join(junit)).map_err(super::named("junit"))?;
    }
    let plan = box_sections(project, &args.r#box)?;
    let image = project.resolve_box(&args.r#box)?.image;
    let engine = Engine::podman(ctx.cancel_token());
    // Without the image, checks that need a container fail saying so; the others still run.
    let venue = match ctx.block(engine.image(&image)) {
        Ok(Some(summary)) => {
            let env = crate::project::runtime::Runtime::from_labels(&summary.labels.unwrap_or_default()).env;
            Venue::Disposable { engine, image, env }
        }
        Ok(None) => Venue::Unavailable(format!(
            "box {b}: its image {image} is not built: run `charly box build {b}` first",
            b = args.r#box
        )),
        Err(e) => Venue::Unavailable(e.to_string()),
    };
    let report = ctx.block(check::run_box(&plan, venue, args.filter.clone(), None))?;
    write_junit(ctx, project, args.junit.as_deref(), &report)?;
    Ok(report)
}

/// `box.test <image>`: the checks baked into the image's `ai.opencharly.check` label, each in
/// a disposable container; never reads the project files. `<image>` is a full reference in
/// local storage, or a box name matched against the images' `ai.opencharly.box` label.
pub(super) fn box_test(args: &BoxTestArgs, ctx: &Ctx) -> Result<Report, CommandError> {
    let engine = Engine::podman(ctx.cancel_token());
    let (image, labels) = ctx.block(find_image(&engine, &args.image))?;
    let Some(label) = labels.get(CHECK_LABEL).and_then(Value::as_str) else {
        return Err(CommandError::Usage(format!(
            "image {image} has no {CHECK_LABEL} label: it carries no checks (box.build bakes a box's candy and \
             box checks into it)"
        )));
    };
    let sections: Value = serde_json::from_str(label).map_err(|e| {
        CommandError::Usage(format!("image {image}: the {CHECK_LABEL} label is not JSON: {e}"))
    })?;
    let mut plan = Plan::default();
    for section in ["candy", "box"] {
        if let Some(list) = sections.get(section).and_then(Value::as_array) {
            let source = format!("{image} ({CHECK_LABEL}.{section})");
            plan.merge(Plan::from_entries(list, &source).in_section(section));
        }
    }
    let env = labels
        .get(crate::project::runtime::label::ENV)
        .and_then(Value::as_str)
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default();
    let venue = Venue::Disposable { engine, image, env };
    ctx.block(check::run_box(&plan, venue, args.filter.clone(), None))
}

/// The image `name` names, and its labels: a reference in local storage, else the one image
/// whose `ai.opencharly.box` label is `name` (several: an error listing them).
async fn find_image(
    engine: &Engine,
    name: &str,
) -> Result<(String, serde_json::Map<String, Value>), CommandError> {
    if let Some(image) = engine.image(name).await? {
        return Ok((name.to_owned(), labels_of(image)));
    }
    let filter = format!("label={}={name}", crate::engine::BOX_LABEL);
    let text = engine.query(&["images", "--filter", &filter, "--format", "json"]).await?;
    let list: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
    let refs: Vec<String> = list
        .iter()
        .filter_map(|i| {
            i.get("Names").and_then(Value::as_array).and_then(|n| n.first()).and_then(Value::as_str)
        })
        .map(str::to_owned)
        .collect();
    match refs.as_slice() {
        [] => Err(CommandError::Usage(format!(
            "no image {name} in local storage, and none labelled {}={name}: build it (charly box build {name}) or \
             pull it (charly box pull {name})",
            crate::engine::BOX_LABEL
        ))),
        [one] => {
            let image = engine
                .image(one)
                .await?
                .ok_or_else(|| CommandError::Usage(format!("image {one} vanished")))?;
            Ok((one.clone(), labels_of(image)))
        }
        several => Err(CommandError::Usage(format!(
            "several images are labelled {}={name} ({}): name one by its reference",
            crate::engine::BOX_LABEL,
            several.join(", ")
        ))),
    }
}

fn labels_of(image: crate::engine::ImageSummary) -> serde_json::Map<String, Value> {
    image.labels.unwrap_or_default().into_iter().map(|(k, v)| (k, Value::String(v))).collect()
}

/// Writes `report` as JUnit XML where `junit` says (relative to the project; for an MCP
/// call beneath the root, atomically, into a directory that exists).
fn write_junit(
    ctx: &Ctx,
    project: &Project,
    junit: Option<&Path>,
    report: &Report,
) -> Result<(), CommandError> {
    let Some(junit) = junit else { return Ok(()) };
    let mut xml = Vec::new();
    check::write_junit(report, &mut xml)?;
    match ctx.scope() {
        // Its directory is made as needed: the checks have run, and a missing `out/` must not
        // throw their report away (issue 14's second trial).
        Scope::Terminal => {
            let path = project.root().join(junit);
            crate::project::refuse_git_path(&path).map_err(super::named("junit"))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| CommandError::Usage(format!("--junit: making {}: {e}", dir.display())))?;
            }
            std::fs::write(&path, xml)
                .map_err(|e| CommandError::Usage(format!("--junit: writing {}: {e}", path.display())))?;
        }
        Scope::Served => served_junit(project, junit, &xml, Missing::Create)?,
    }
    Ok(())
}

/// Writes the JUnit report `xml` to `junit` for an MCP call: beneath the root, atomically, and
/// only as a new file or over an earlier JUnit report ([`junit_replaceable`], asked again).
///
/// # Errors
///
/// As [`junit_replaceable`] and [`Project::write_file`].
pub(super) fn served_junit(
    project: &Project,
    junit: &Path,
    xml: &[u8],
    missing: Missing,
) -> Result<(), CommandError> {
    junit_replaceable(project, junit)?;
    project.write_file(junit, xml, missing).map_err(super::named("junit"))?;
    Ok(())
}

/// For an MCP call, before the checks run: `junit` names a new file or an earlier JUnit report.
/// `check.box` is a read-only tool, and its `junit` argument must not turn it into a writer of
/// any project file (a client of a `--read-only` server replaced charly.yml with a report:
/// trial 28, H2).
///
/// # Errors
///
/// [`CommandError::Usage`] for a file that is not a JUnit report.
pub(super) fn junit_replaceable(project: &Project, junit: &Path) -> Result<(), CommandError> {
    // Refused paths (`..`, into .git/) are named now, before any check runs.
    project.resolve_inside(junit).map_err(super::named("junit"))?;
    if let Ok((file, relative)) = project.open_inside(junit) {
        let mut head = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, 4096), &mut head).map_err(|e| {
            CommandError::Usage(format!("argument `junit`: reading {}: {e}", relative.display()))
        })?;
        let head = String::from_utf8_lossy(&head);
        if !(head.trim_start().starts_with("<?xml") && head.contains("<testsuites")) {
            return Err(CommandError::Usage(format!(
                "argument `junit`: {} exists and is not a JUnit report (an XML file of <testsuites>); \
                 name a new file (such as out/junit.xml) or an earlier report: nothing was written",
                relative.display()
            )));
        }
    }
    Ok(())
}
