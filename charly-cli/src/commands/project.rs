//! `charly box ...` and `charly candy ...`.

use std::path::Component;

use super::reply;
use crate::cli::{BoxCmd, CandyCmd, ListCmd, NewCmd};
use crate::context::{Ctx, Scope};
use crate::error::CommandError;
use crate::project::{self, PackageSection, Project, RepoCache, RepoSpec};
use crate::report::Reply;

pub(super) fn run_box(cmd: &BoxCmd, ctx: &Ctx, project: &Project) -> Result<Reply, CommandError> {
    match cmd {
        BoxCmd::New(NewCmd::Project { dir }) => {
            ctx.check_cancelled()?;
            reply(match ctx.scope() {
                _ if dir.components().all(|c| c == Component::CurDir) => project::new_project(ctx.root())?,
                Scope::Terminal => project::new_project(&ctx.root().join(dir))?,
                // Every step beneath the root, and cancelled before charly.yml is linked in.
                Scope::Served => project.new_project_inside(dir)?,
            })
        }
        BoxCmd::New(NewCmd::Box { name, base }) => reply(project.new_box(name, base)?),
        BoxCmd::New(NewCmd::Candy { name }) => reply(project.new_candy(name)?),
        BoxCmd::Set(set) => reply(project.set(&set.path, &set.value)?),
        BoxCmd::AddCandy(a) => reply(project.add_candy(&a.r#box, &a.candy)?),
        BoxCmd::RmCandy(a) => reply(project.rm_candy(&a.r#box, &a.candy)?),
        BoxCmd::Write(w) => {
            // A served call's stdin is the protocol stream: `-` is then the content `-`.
            let content = match (w.content.as_str(), ctx.scope()) {
                ("-", Scope::Terminal) => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text).map_err(|e| {
                        CommandError::Usage(format!("--content -: reading standard input: {e}"))
                    })?;
                    text
                }
                _ => w.content.clone(),
            };
            reply(project.write(&w.path, &content).map_err(super::named("path"))?)
        }
        BoxCmd::Cat(c) => reply(
            match ctx.scope() {
                Scope::Terminal => project.cat(&c.path),
                Scope::Served => project.cat_at_most(&c.path, project::MAX_CAT_BYTES),
            }
            .map_err(super::named("path"))?,
        ),
        BoxCmd::Fetch(r) => reply(RepoCache::from_env().fetch(&repo_spec(ctx, r.spec.as_deref())?)?),
        BoxCmd::Refresh(r) => reply(RepoCache::from_env().refresh(&repo_spec(ctx, r.spec.as_deref())?)?),
        BoxCmd::Validate => reply(project.validate()?),
        BoxCmd::Inspect(b) => reply(project.inspect(&b.r#box)?),
        BoxCmd::List(ListCmd::Boxes) => reply(project.list_boxes()?),
        BoxCmd::List(ListCmd::Candies) => reply(project.list_candies()?),
        BoxCmd::List(ListCmd::Checks) => reply(project.list_checks()?),
        BoxCmd::List(ListCmd::Aliases) => reply(project.list_aliases()?),
        BoxCmd::List(ListCmd::Routes) => reply(project.list_routes()?),
        BoxCmd::List(ListCmd::Services) => reply(project.list_services()?),
        BoxCmd::List(ListCmd::Targets) => reply(project.list_targets()?),
        BoxCmd::List(ListCmd::Volumes) => reply(project.list_volumes()?),
        BoxCmd::Generate(b) => reply(project.generate(&b.r#box)?),
        BoxCmd::Test(t) => reply(super::live::box_test(t, ctx)?),
        BoxCmd::Pull(p) => reply(crate::deploy::Deploy::new(ctx, project).pull(&p.r#box, p.from.as_deref())?),
        BoxCmd::Merge(m) => {
            reply(crate::deploy::Deploy::new(ctx, project).merge(&crate::deploy::merge::MergeOptions {
                box_name: m.r#box.clone(),
                all: m.all,
                max_mb: m.max_mb,
                max_total_mb: m.max_total_mb,
                tag: m.tag.clone(),
                dry_run: m.dry_run,
            })?)
        }
        BoxCmd::Build(b) => {
            ctx.progress(0.0, None, format!("building box {}", b.r#box));
            let mut built = project.build(&b.r#box)?;
            built.pruned_images = crate::deploy::Deploy::new(ctx, project).prune_images(&b.r#box);
            reply(built)
        }
    }
}

/// The repository `box.fetch`/`box.refresh` name. Over MCP a spec the caller gives must be
/// remote: a local path or `file://` URL would let a tool call read a repository outside the
/// project root (the default, `$CHARLY_PROJECT_REPO`, is the server operator's choice).
fn repo_spec(ctx: &Ctx, spec: Option<&str>) -> Result<RepoSpec, CommandError> {
    let repo = RepoSpec::parse_or_env(spec)?;
    if let (Scope::Served, Some(spec)) = (ctx.scope(), spec)
        && repo.is_local()
    {
        return Err(project::ProjectError::RepoSpec {
            spec: spec.to_owned(),
            message: "a local repository is outside the project root; as a tool, `spec` is a remote \
                      git URL or owner/name"
                .into(),
        }
        .into());
    }
    Ok(repo)
}

pub(super) fn run_candy(cmd: &CandyCmd, project: &Project) -> Result<Reply, CommandError> {
    let (packages, section) = match cmd {
        CandyCmd::Set(s) => return reply(project.candy_set(&s.name, &s.path, &s.value)?),
        // The section comes from the parsed command, never from the process's own argv.
        CandyCmd::AddRpm(p) => (p, PackageSection::Rpm),
        CandyCmd::AddDeb(p) => (p, PackageSection::Deb),
        CandyCmd::AddPac(p) => (p, PackageSection::Pac),
        CandyCmd::AddAur(p) => (p, PackageSection::Aur),
    };
    reply(project.add_packages(&packages.name, section, &packages.packages)?)
}
