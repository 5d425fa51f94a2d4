# `make mutation` (not part of `make test`): mutation testing of the approval core with mutmut
# (the modules and tests are listed under [tool.mutmut] in pyproject.toml). Fails below
# MUTATION_MIN percent of mutants killed. Takes tens of minutes on two cores.
MUTATION_MIN ?= 90

.PHONY: mutation
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet 'mutmut==3.8.1'
	rm -rf mutants
	$(BIN)/mutmut run --max-children $$(nproc) || true
	$(BIN)/python mk/mutation_score.py --min $(MUTATION_MIN)
