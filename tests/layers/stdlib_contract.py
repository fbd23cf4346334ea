"""An import-linter contract type: a package imports only itself and the standard library.

import-linter's own `forbidden` contract needs every forbidden package named, so a new
dependency would slip past it; this one allows exactly the standard library
(`sys.stdlib_module_names`) and the package's own modules, and refuses anything else.
Registered in pyproject.toml (`contract_types`); `lint-imports` runs from the checkout,
which import-linter puts on sys.path.
"""

from __future__ import annotations

import sys

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


class StdlibOnlyContract(Contract):
    type_name = "stdlib_only"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        outside = []
        for package in self.packages:  # type: ignore[attr-defined]
            own = {package} | graph.find_descendants(package)
            for importer in sorted(own):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if imported in own or imported.split(".")[0] in sys.stdlib_module_names:
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = ", ".join(f"l.{d['line_number']}" for d in details)
                    outside.append(f"{importer} -> {imported} ({lines})")
        return ContractCheck(kept=not outside, metadata={"outside": outside})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error("Imports from outside the package and the standard library:")
        output.new_line()
        for line in check.metadata["outside"]:
            output.print_error(f"-   {line}", bold=False)
        output.new_line()
