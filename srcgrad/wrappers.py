"""The texts of the generated Jacobian, Hessian and holomorphic-derivative functions (``api``),
filled in by ``matrices.generate``.

Each reads as ordinary code: one primal (``pullback`` or ``linearize``), then one ``back`` per
output element or one tangent per input element, stacked into ``out.shape + arg.shape``. The
``_MANY`` texts call a pullback that also returns ``back_many`` (srcgrad/batched.py): one sweep
for a block of output elements; ``rows`` falls back to ``back`` per element where it cannot run. The
``_TWIN`` texts are the same Jacobians through ``vjp`` and ``jvp`` (a primal per row or column):
what a transform of a Jacobian differentiates, since a pullback returns a function.
"""

JACOBIAN_REVERSE = """\
def {name}({args}):
    {value}, {back} = {pullback}({args})
    {value} = {single_output}({value}, {fname!r})
    {parts} = []
    for {i} in range({np}.size({value})):
        {parts}.append({back}({unit_basis}({value}, {i})))
    return {stack_rows}({parts}, {value}, {x})
"""
JACOBIAN_REVERSE_MANY = """\
def {name}({args}):
    {value}, {back}, {back_many} = {pullback}({args})
    {value} = {single_output}({value}, {fname!r})
    return {rows}({back_many}, {back}, {value}, {x})
"""
JACOBIAN_FORWARD = """\
def {name}({args}):
    {value}, {linear} = {linearize}({args})
    {value} = {single_output}({value}, {fname!r})
    {parts} = []
    for {i} in range({np}.size({jacobian_argument}({x}))):
        {parts}.append({linear}({unit_basis}({x}, {i})))
    return {stack_columns}({parts}, {value}, {x})
"""
JACOBIAN_AUTO = """\
def {name}({args}):
    {value}, {back} = {pullback}({args})
    {value} = {single_output}({value}, {fname!r})
    {parts} = []
    if {np}.size({jacobian_argument}({x})) < {np}.size({value}):
        {value}, {linear} = {linearize}({args})
        for {i} in range({np}.size({x})):
            {parts}.append({linear}({unit_basis}({x}, {i})))
        return {stack_columns}({parts}, {value}, {x})
    for {i} in range({np}.size({value})):
        {parts}.append({back}({unit_basis}({value}, {i})))
    return {stack_rows}({parts}, {value}, {x})
"""
JACOBIAN_AUTO_MANY = """\
def {name}({args}):
    {value}, {back}, {back_many} = {pullback}({args})
    {value} = {single_output}({value}, {fname!r})
    {parts} = []
    if {np}.size({jacobian_argument}({x})) < {np}.size({value}):
        {value}, {linear} = {linearize}({args})
        for {i} in range({np}.size({x})):
            {parts}.append({linear}({unit_basis}({x}, {i})))
        return {stack_columns}({parts}, {value}, {x})
    return {rows}({back_many}, {back}, {value}, {x})
"""
JACOBIAN_REVERSE_TWIN = """\
def {name}({args}):
    {value} = {single_output}({f}({args}), {fname!r})
    {parts} = []
    for {i} in range({np}.size({value})):
        {parts}.append({vjp}({args}, {unit_basis}({value}, {i})))
    return {stack_rows}({parts}, {value}, {x})
"""
JACOBIAN_FORWARD_TWIN = """\
def {name}({args}):
    {value} = {single_output}({f}({args}), {fname!r})
    {parts} = []
    for {i} in range({np}.size({jacobian_argument}({x}))):
        {parts}.append({jvp}({args}, {unit_basis}({x}, {i}))[1])
    return {stack_columns}({parts}, {value}, {x})
"""
JACOBIAN_AUTO_TWIN = """\
def {name}({args}):
    {value} = {single_output}({f}({args}), {fname!r})
    {parts} = []
    if {np}.size({jacobian_argument}({x})) < {np}.size({value}):
        for {i} in range({np}.size({x})):
            {parts}.append({jvp}({args}, {unit_basis}({x}, {i}))[1])
        return {stack_columns}({parts}, {value}, {x})
    for {i} in range({np}.size({value})):
        {parts}.append({vjp}({args}, {unit_basis}({value}, {i})))
    return {stack_rows}({parts}, {value}, {x})
"""
HESSIAN = """\
def {name}({args}):
    {parts} = []
    for {i} in range({np}.size({jacobian_argument}({x}))):
        {parts}.append({hvp}({args}, {unit_basis}({x}, {i})))
    return {stack_columns}({parts}, {x}, {x})
"""
HOLOMORPHIC = """\
def {name}({args}):
    {value} = {holomorphic_seed}({f}({args}), {x}, {fname!r})
    return {holomorphic_result}({vjp}({args}, {value}))
"""
