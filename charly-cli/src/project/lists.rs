//! `box.list.{aliases,routes,services,targets,volumes}`: what the project's candies declare for
//! running boxes, and the boxes in build order (REFERENCE.md §12, `image.list.*`).
//!
//! The first four list each candy's declarations in candy-name order (then file order), read
//! the way `box.generate` reads them; an entry `box.validate` would refuse is left out.
//! `targets` lists every box after the boxes its base image is built from.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use super::error::Result;
use super::model::{Kind, Node, Project, left_out};
use super::runtime::{AliasDecl, Route, Service, VolumeDecl};
use crate::report::Report;

/// `box.list.aliases`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AliasList {
    /// Every alias, by candy.
    pub aliases: Vec<AliasDecl>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for AliasList {
    /// `name<TAB>command<TAB>candy` per alias.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.aliases.iter().try_for_each(|a| writeln!(f, "{}\t{}\t{}", a.name, a.command, a.candy))
    }
}

impl Report for AliasList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `box.list.routes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RouteList {
    /// Every route, by candy.
    pub routes: Vec<Route>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for RouteList {
    /// `host<TAB>path<TAB>port<TAB>candy` per route.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.routes.iter().try_for_each(|r| writeln!(f, "{}\t{}\t{}\t{}", r.host, r.path, r.port, r.candy))
    }
}

impl Report for RouteList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `box.list.services`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ServiceList {
    /// Every service, by candy.
    pub services: Vec<Service>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for ServiceList {
    /// `name<TAB>command<TAB>candy` per service.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.services.iter().try_for_each(|s| writeln!(f, "{}\t{}\t{}", s.name, s.command, s.candy))
    }
}

impl Report for ServiceList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `box.list.volumes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VolumeList {
    /// Every volume, by candy.
    pub volumes: Vec<VolumeDecl>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for VolumeList {
    /// `name<TAB>path<TAB>candy` per volume.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.volumes.iter().try_for_each(|v| writeln!(f, "{}\t{}\t{}", v.name, v.path, v.candy))
    }
}

impl Report for VolumeList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// One box of `box.list.targets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BuildTarget {
    /// The box.
    pub name: String,
    /// The image `box.build` tags.
    pub image: String,
    /// Its base image.
    pub base: String,
    /// The box whose image the base is, when it is one of the project's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// `box.list.targets`: the boxes in an order they can be built in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TargetList {
    /// Every box after the box its base is built from; otherwise in file order.
    pub targets: Vec<BuildTarget>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for TargetList {
    /// `name<TAB>image<TAB>base` per box.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.targets.iter().try_for_each(|t| writeln!(f, "{}\t{}\t{}", t.name, t.image, t.base))
    }
}

impl Report for TargetList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Project {
    /// Every candy node in name order, with what its deploy-time nodes declare, and the
    /// warnings for the files left out.
    fn candy_runtimes(&self) -> Result<(Vec<super::runtime::Runtime>, Vec<String>)> {
        let (nodes, unreadable) = self.load()?;
        let beneath = self.beneath()?;
        let mut candies: Vec<&Node> = nodes.iter().filter(|n| n.kind == Some(Kind::Candy)).collect();
        candies.sort_by(|a, b| a.name.cmp(&b.name));
        let runtimes =
            candies.into_iter().map(|c| super::image::resolve_candy(c, &nodes, &beneath).runtime).collect();
        Ok((runtimes, left_out(&unreadable)))
    }

    /// `box.list.aliases`.
    pub fn list_aliases(&self) -> Result<AliasList> {
        let (runtimes, warnings) = self.candy_runtimes()?;
        Ok(AliasList { aliases: runtimes.into_iter().flat_map(|r| r.aliases).collect(), warnings })
    }

    /// `box.list.routes`.
    pub fn list_routes(&self) -> Result<RouteList> {
        let (runtimes, warnings) = self.candy_runtimes()?;
        Ok(RouteList { routes: runtimes.into_iter().flat_map(|r| r.routes).collect(), warnings })
    }

    /// `box.list.services`.
    pub fn list_services(&self) -> Result<ServiceList> {
        let (runtimes, warnings) = self.candy_runtimes()?;
        Ok(ServiceList { services: runtimes.into_iter().flat_map(|r| r.services).collect(), warnings })
    }

    /// `box.list.volumes`.
    pub fn list_volumes(&self) -> Result<VolumeList> {
        let (runtimes, warnings) = self.candy_runtimes()?;
        Ok(VolumeList { volumes: runtimes.into_iter().flat_map(|r| r.volumes).collect(), warnings })
    }

    /// `box.list.targets`: every box with its image and base, a box whose base is another
    /// box's image after that box (file order otherwise; a cycle keeps file order). When a file
    /// could not be read, a box that cannot be resolved without it is left out with a warning.
    pub fn list_targets(&self) -> Result<TargetList> {
        let (nodes, unreadable) = self.load()?;
        let mut warnings = left_out(&unreadable);
        let beneath = self.beneath()?;
        let mut pending: Vec<BuildTarget> = Vec::new();
        for node in nodes.iter().filter(|n| n.kind == Some(Kind::Box)) {
            let b = match self.resolve_in(&nodes, &beneath, &node.name) {
                Ok(b) => b,
                Err(e) if !unreadable.is_empty() => {
                    warnings.push(format!("box {} is left out: {e}", node.name));
                    continue;
                }
                Err(e) => return Err(e),
            };
            pending.push(BuildTarget { name: b.name, image: b.image, base: b.base, after: None });
        }
        for i in 0..pending.len() {
            let base = pending[i].base.clone();
            pending[i].after = pending.iter().find(|t| same_image(&t.image, &base)).map(|t| t.name.clone());
        }
        let mut targets: Vec<BuildTarget> = Vec::new();
        while !pending.is_empty() {
            let ready = pending
                .iter()
                .position(|t| t.after.as_ref().is_none_or(|a| targets.iter().any(|d| d.name == *a)))
                .unwrap_or(0);
            targets.push(pending.remove(ready));
        }
        Ok(TargetList { targets, warnings })
    }
}

/// Whether a base reference names `image` (`localhost/web:latest` is `localhost/web` too).
fn same_image(image: &str, base: &str) -> bool {
    image == base || image.strip_suffix(":latest") == Some(base)
}
