# lit configuration of collc's golden CLI tests (RUN lines in .test and
# .yaml files; YAML plans carry their RUN and CHECK lines as comments).
import os
import lit.formats

config.name = "collc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".yaml", ".calgo"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.collc_obj_dir
config.substitutions.append(("%collc", os.path.join(config.collc_bin_dir, "collc")))
config.substitutions.append(("%bin", config.collc_bin_dir))
config.substitutions.append(("%src", config.collc_src_dir))
config.environment["PATH"] = os.pathsep.join(
    [config.collc_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["LC_ALL"] = "C.UTF-8"
# Sanitizer builds (scripts/sanitize): tests that cannot run under one say
# UNSUPPORTED: asan.
if "-fsanitize=address" in getattr(config, "collc_cxx_flags", ""):
    config.available_features.add("asan")
