//! Module and optimizer files in a checkpoint folder (burn's burnpack
//! records), with the file's path in every error.

use crate::base::error::{LearnError, Result};
use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::prelude::Device;
use std::path::Path;

/// Maps a burn record error to a checkpoint error naming `path`.
pub fn checkpoint_error(path: &Path) -> impl FnOnce(burn::store::RecordError) -> LearnError + '_ {
    move |e| LearnError::Checkpoint {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Loads weights saved with `save_file` into `module`, as a typed error on mismatch.
pub fn load_module<M: Module>(module: M, path: &Path) -> Result<M> {
    let record = burn::store::ModuleRecord::load(path).map_err(checkpoint_error(path))?;
    module
        .try_load_record(record)
        .map_err(checkpoint_error(path))
}

/// Saves `module` as `dir/name`, naming the file in any error.
pub fn save_module<M: Module>(module: &M, dir: &Path, name: &str) -> Result<()> {
    let path = dir.join(name);
    module
        .clone()
        .save_file(&path)
        .map_err(checkpoint_error(&path))
}

/// Saves an optimizer's state as `dir/name`.
pub fn save_optimizer(optim: &ModuleOptimizer, dir: &Path, name: &str) -> Result<()> {
    let path = dir.join(name);
    optim.save(&path).map_err(checkpoint_error(&path))
}

/// Reads an optimizer's state from `dir/name`.
pub fn load_optimizer(optim: ModuleOptimizer, dir: &Path, name: &str) -> Result<ModuleOptimizer> {
    let path = dir.join(name);
    optim.load(&path).map_err(checkpoint_error(&path))
}

/// The device a module's weights live on (the inference device of a `valid()` copy).
pub fn module_device<M: Module>(module: &M) -> Device {
    module.devices().into_iter().next().unwrap_or_default()
}

/// A learner's `save` and `load` from one list of its modules and optimizers
/// with their file names, so the two cannot disagree.
macro_rules! checkpoint_files {
    (
        modules { $($module:ident: $module_file:literal),* $(,)? }
        optimizers { $($optim:ident: $optim_file:literal),* $(,)? }
    ) => {
        fn save(&self, dir: &std::path::Path) -> $crate::base::error::Result<()> {
            $( $crate::base::store::save_module(&self.$module, dir, $module_file)?; )*
            $( $crate::base::store::save_optimizer(&self.$optim, dir, $optim_file)?; )*
            Ok(())
        }

        fn load(&mut self, dir: &std::path::Path) -> $crate::base::error::Result<()> {
            $(
                self.$module =
                    $crate::base::store::load_module(self.$module.clone(), &dir.join($module_file))?;
            )*
            $(
                self.$optim =
                    $crate::base::store::load_optimizer(self.$optim.clone(), dir, $optim_file)?;
            )*
            Ok(())
        }
    };
}

pub(crate) use checkpoint_files;
