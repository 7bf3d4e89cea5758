# Runs the GoogleTest unit tests as part of check-reshard.
import os

import lit.formats

config.name = "RESHARD-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.reshard_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
