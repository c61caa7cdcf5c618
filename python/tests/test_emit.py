"""`ringsim plan --emit torchtitan|ring-flash-attn` prints Python: it must parse, define what it
says, and call the stack with the plan's numbers (the stacks themselves are not installed here)."""
import ast

from support import cli

ASK = ["plan", "--hardware", "h100-sxm", "--model", "llama3-8b", "--devices", "16"]


def test_torchtitan_configuration_function_parses_and_sets_the_plans_degrees():
    text = cli(*ASK, "--impl", "torch-cp", "--emit", "torchtitan")
    tree = ast.parse(text)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert [f.name for f in functions] == ["ringsim_plan"]
    assigned = {ast.unparse(n.targets[0]): ast.unparse(n.value)
                for n in ast.walk(functions[0]) if isinstance(n, ast.Assign)}
    degrees = [int(assigned["config.parallelism." + k]) for k in
               ("data_parallel_replicate_degree", "data_parallel_shard_degree", "tensor_parallel_degree",
                "context_parallel_degree")]
    pipeline = int(assigned.get("config.parallelism.pipeline_parallel_degree", "1"))
    # The degrees multiply to the plan's device count (NGPU in the header).
    assert degrees[0] * degrees[1] * degrees[2] * degrees[3] * pipeline == int(text.split("NGPU=")[1].split()[0])
    assert assigned["config.training.max_context_length"] == "131072"


def test_ring_flash_attn_snippet_parses_and_calls_the_imported_function():
    text = cli(*ASK, "--impl", "ring-flash-attn", "--cp", "ring", "--emit", "ring-flash-attn")
    tree = ast.parse(text)
    imported = [a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "ring_flash_attn" for a in n.names]
    assert len(imported) == 1
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert imported[0] in calls
    assert {"ring_group", "shard", "attention"} <= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
