"""``triton.autotune`` / ``triton.heuristics`` / ``triton.Config`` for ascdsl kernels.

:func:`autotune` picks, per distinct value of its ``key`` arguments, the first config whose
specialisation compiles (configs a kernel rejects with a ``CompilationError`` are skipped) and
caches that choice. Cost-based selection comes with the simulator's cost model; until then
``warmup``, ``rep``, ``do_bench`` and the ``perf_model`` of ``prune_configs_by`` are accepted and
unused (``early_config_prune`` does run). ``num_warps``/``num_stages``/... of a config are passed to
the launch, where they have no effect (see :data:`ascdsl.jit.LAUNCH_OPTIONS`).
"""
from __future__ import annotations

from typing import Any, Callable

from ..errors import CompilationError, Error


class Config:
    """A set of constexpr values (``kwargs``) and compile options to try: ``Config({"BLOCK": 128},
    num_warps=4)``."""

    def __init__(self, kwargs: dict, num_warps=None, num_stages=None, num_ctas=None, maxnreg=None,
                 pre_hook: Callable | None = None, **options):
        self.kwargs = dict(kwargs)
        self.options = {k: v for k, v in dict(num_warps=num_warps, num_stages=num_stages, num_ctas=num_ctas,
                                              maxnreg=maxnreg, **options).items() if v is not None}
        self.num_warps, self.num_stages, self.num_ctas, self.maxnreg = num_warps, num_stages, num_ctas, maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """The constexprs and the options, as launch keywords."""
        return {**self.kwargs, **self.options}

    def __repr__(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in self.all_kwargs().items())


def _arg_names(fn) -> list[str]:
    return list(fn.arg_names)


def _key_part(value) -> Any:
    """A hashable stand-in of a key argument: arrays and tensors by dtype and shape."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return (str(value.dtype), tuple(value.shape))
    return value


class _Launcher:
    """``kernel[grid](...)`` for wrappers that implement ``run(*args, grid=..., **kwargs)``."""

    def __getitem__(self, grid) -> Callable:
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def specialize(self, *args, **kwargs):
        return self.fn.specialize(*args, **kwargs)

    def warmup(self, *args, grid=None, **kwargs):
        return self.fn.warmup(*args, grid=grid, **kwargs)

    @property
    def arg_names(self) -> list[str]:
        return _arg_names(self.fn)


class Autotuner(_Launcher):
    """A kernel launched with the cached first valid :class:`Config` for its key (see the module doc)."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None, pre_hook=None,
                 post_hook=None, prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False,
                 do_bench=None, cache_results=False):
        self.fn = fn
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or [])
        self.pre_hook, self.post_hook = pre_hook, post_hook
        self.early_config_prune = (prune_configs_by or {}).get("early_config_prune")
        self.cache: dict[tuple, Config] = {}
        self.best_config: Config | None = None

    def _choose(self, args, kwargs, named: dict) -> Config:
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(configs, named, **kwargs)) or configs
        errors = []
        for config in configs:
            clash = sorted(set(config.kwargs) & set(kwargs))
            if clash:
                raise Error(f"autotune config {config} sets `{clash[0]}`, which the launch also passes; "
                            "pass it in one place only")
            try:
                self.fn.warmup(*args, **kwargs, **config.all_kwargs())
            except CompilationError as e:
                errors.append(e)
                continue
            return config
        raise errors[-1]

    def run(self, *args, grid, **kwargs):
        launch = {k: kwargs.pop(k) for k in ("backend", "platform") if k in kwargs}
        named = dict(zip(self.arg_names, args)) | kwargs
        key = tuple(_key_part(named[k]) for k in self.keys if k in named)
        if key not in self.cache:
            self.cache[key] = self._choose(args, kwargs, named)
        config = self.best_config = self.cache[key]
        for name in self.reset_to_zero:
            named[name][...] = 0
        if config.pre_hook is not None:
            config.pre_hook({**named, **config.all_kwargs()})
        return self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs(), **launch)


class Heuristics(_Launcher):
    """A kernel whose listed constexprs are computed from the other arguments at each launch."""

    def __init__(self, fn, arg_names, values: dict[str, Callable[[dict], Any]]):
        self.fn, self.values = fn, dict(values)

    def _complete(self, args, kwargs) -> dict:
        named = dict(zip(self.arg_names, args)) | kwargs
        for name, rule in self.values.items():
            named[name] = kwargs[name] = rule(named)
        return kwargs

    def run(self, *args, grid, **kwargs):
        return self.fn.run(*args, grid=grid, **self._complete(args, dict(kwargs)))

    def warmup(self, *args, grid=None, **kwargs):
        return self.fn.warmup(*args, grid=grid, **self._complete(args, dict(kwargs)))


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """``@ascdsl.autotune(configs=[ascdsl.Config({...}), ...], key=["n"])`` over ``@ascdsl.jit``."""
    def decorator(fn):
        return Autotuner(fn, _arg_names(fn), configs, key, reset_to_zero, restore_value, pre_hook, post_hook,
                         prune_configs_by, warmup, rep, use_cuda_graph, do_bench, cache_results)
    return decorator


def heuristics(values: dict[str, Callable[[dict], Any]]):
    """``@ascdsl.heuristics({"BLOCK": lambda args: ascdsl.next_power_of_2(args["n"])})`` over ``@jit``."""
    return lambda fn: Heuristics(fn, _arg_names(fn), values)


__all__ = ["Autotuner", "Config", "Heuristics", "autotune", "heuristics"]
