"""Build the example conversations in ``presets/``: six agent runs, one per lesson.

    python scripts/make_presets.py           # write presets/*.json
    python scripts/make_presets.py --check   # compare with the files on disk; exit 1 listing any that differ

Every text here was written for the playground; the domains are example.org / example.com /
example.net. The output is deterministic: the only randomness is ``random.Random`` with fixed
seeds (call ids, measurement noise, and the generated 200k-token run).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import string
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PRESETS_DIR = ROOT / "presets"

Json = dict[str, Any]

# The book's rules (Listing 6.5), spelled out for the presets that add to them: a preset's
# "rules" replace the defaults as a whole.
BOOK_CALL_RULES = [{"tool": "create_file", "argument": "content", "replacement": "[Content saved to file]"}]
BOOK_RESULT_RULES = [
    {"tool": "read_file", "template": "File content from {file_path}. Re-read if needed."},
    {"tool": "search_web", "template": "Search results processed. Query: {query}. Re-search if needed."},
    {"tool": "tavily_search", "template": "Search results processed. Query: {query}. Re-search if needed."},
]


def dump(data: Json) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def arguments(args: Json) -> str:
    """A call's arguments as the APIs send them: compact JSON text."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def dedent(text: str) -> str:
    """A triple-quoted block without its first newline and common indentation."""
    lines = text.strip("\n").rstrip().split("\n")
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    return "\n".join(line[margin:] for line in lines)


def prose(text: str) -> str:
    """Markdown written wrapped in the source, unwrapped: each paragraph and list entry on one line."""
    blocks = []
    for block in dedent(text).split("\n\n"):
        lines: list[str] = []
        for line in block.split("\n"):
            starts_entry = line.startswith(("#", "- ", "* ", "|")) or line.split(" ", 1)[0].rstrip(".").isdigit()
            if lines and not starts_entry:
                lines[-1] += " " + line.strip()
            else:
                lines.append(line)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


class Ids:
    """Realistic-looking ids from a seeded generator."""

    ALNUM = string.ascii_letters + string.digits

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def _pick(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def openai_call(self) -> str:
        return "call_" + self._pick(self.ALNUM, 24)

    def anthropic_tool(self) -> str:
        return "toolu_01" + self._pick(self.ALNUM, 22)

    def hex(self, prefix: str, n: int = 48) -> str:
        return prefix + self._pick("0123456789abcdef", n)


# ---------------------------------------------------------------------------------------------
# Tool definitions: one JSON Schema per tool, written out in each provider's wrapper.

SCHEMAS: dict[str, tuple[str, Json]] = {}


def schema(name: str, description: str, properties: Json, required: Iterable[str]) -> None:
    SCHEMAS[name] = (description, {"type": "object", "properties": properties, "required": list(required),
                                   "additionalProperties": False})


def _string(description: str, **more: Any) -> Json:
    return {"type": "string", "description": description, **more}


schema("create_file", "Create a file, or overwrite it, with the given content. Parent folders are created as needed.",
       {"file_path": _string("Path of the file, relative to the workspace root."),
        "content": _string("The complete text to write to the file.")}, ["file_path", "content"])
schema("read_file", "Read a text file from the workspace and return its content.",
       {"file_path": _string("Path of the file, relative to the workspace root.")}, ["file_path"])
schema("search_web", "Search the web. Returns up to 8 results, each with a title, URL and snippet.",
       {"query": _string("The search query, as you would type it into a search engine.")}, ["query"])
schema("bash", "Run a shell command in the workspace (bash, 120 s timeout). Returns stdout and stderr combined, "
               "followed by the exit code when it is not 0.",
       {"command": _string("The command line to run.")}, ["command"])
schema("read_file_path", "Read a file of the repository and return it with no line numbers.",
       {"path": _string("Path relative to the repository root, e.g. src/app/main.py.")}, ["path"])
schema("edit_file", "Replace one exact occurrence of old_str with new_str in a file. Fails if old_str is missing "
                    "or occurs more than once; include enough surrounding lines to make it unique.",
       {"path": _string("Path relative to the repository root."),
        "old_str": _string("The exact text to replace, including whitespace."),
        "new_str": _string("The replacement text.")}, ["path", "old_str", "new_str"])
schema("run_tests", "Run the test suite (or part of it) and return pytest's output.",
       {"command": _string("A pytest command line, e.g. `pytest -q tests/test_api.py`.")}, ["command"])
schema("list_dir", "List a directory of the repository as an indented tree (hidden files and caches left out).",
       {"path": _string("Directory relative to the repository root; '.' for the root."),
        "depth": {"type": "integer", "description": "How many levels to show (default 2).", "minimum": 1,
                  "maximum": 5}}, ["path"])
schema("tavily_search", "Search the web with Tavily. Returns JSON: the query, and results with title, url, "
                        "content (an extract of the page) and a relevance score.",
       {"query": _string("What to search for."),
        "max_results": {"type": "integer", "description": "Number of results (1-10).", "minimum": 1,
                        "maximum": 10},
        "search_depth": {"type": "string", "enum": ["basic", "advanced"],
                         "description": "advanced is slower and returns longer extracts."}},
       ["query"])
schema("fetch_page", "Download a web page and return its main text as Markdown (navigation, ads and scripts "
                     "removed). Long pages are cut at 40,000 characters.",
       {"url": _string("The absolute URL of the page.")}, ["url"])
schema("read_log", "Read a file from the log and config volume of the production hosts (read-only).",
       {"path": _string("Absolute path on the host, e.g. /var/log/shop/api.log."),
        "tail": {"type": "integer", "description": "Only the last N lines.", "minimum": 1}}, ["path"])
schema("run_sql", "Run a read-only SQL query on the reporting replica of the shop database (PostgreSQL 16). "
                  "Results come back as a text table; at most 200 rows.",
       {"query": _string("One SQL statement. Writes are rejected.")}, ["query"])
schema("search_docs", "Search the internal runbooks and the engineering wiki.",
       {"query": _string("Keywords."),
        "space": {"type": "string", "enum": ["runbooks", "wiki", "postmortems"],
                  "description": "Limit the search to one space."}}, ["query"])


def _definition(tool: str) -> tuple[str, str, Json]:
    """A tool's (name, description, parameters); ``read_file_path`` and ``read_log`` are variants
    of ``read_file`` that take ``path``."""
    description, parameters = SCHEMAS[tool]
    name = "read_file" if tool in ("read_file_path", "read_log") else tool
    return name, description, parameters


def chat_tools(*names: str) -> list[Json]:
    out = []
    for tool in names:
        name, description, parameters = _definition(tool)
        out.append({"type": "function", "function": {"name": name, "description": description,
                                                     "parameters": parameters}})
    return out


def responses_tools(*names: str) -> list[Json]:
    out = []
    for tool in names:
        name, description, parameters = _definition(tool)
        out.append({"type": "function", "name": name, "description": description, "parameters": parameters,
                    "strict": False})
    return out


def anthropic_tools(*names: str) -> list[Json]:
    out = []
    for tool in names:
        name, description, parameters = _definition(tool)
        schema_only = {key: value for key, value in parameters.items() if key != "additionalProperties"}
        out.append({"name": name, "description": description, "input_schema": schema_only})
    return out


# ---------------------------------------------------------------------------------------------
# Conversation builders, one per wire format.


class Chat:
    """An OpenAI Chat Completions request, built message by message."""

    def __init__(self, seed: int, system: str) -> None:
        self.ids = Ids(seed)
        self.messages: list[Json] = [{"role": "system", "content": system}]

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})

    def call(self, *calls: tuple[str, Json], text: str | None = None) -> list[str]:
        """One assistant message with one tool call per (name, args); their ids."""
        ids = [self.ids.openai_call() for _ in calls]
        self.messages.append({"role": "assistant", "content": text, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments(args)}}
            for call_id, (name, args) in zip(ids, calls, strict=True)]})
        return ids

    def result(self, call_id: str, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def step(self, name: str, args: Json, result: str, text: str | None = None) -> None:
        """A call and its result."""
        (call_id,) = self.call((name, args), text=text)
        self.result(call_id, result)

    def request(self, model: str, tools: list[Json], **more: Any) -> Json:
        return {"model": model, "messages": self.messages, "tools": tools, **more}


class Responses:
    """An OpenAI Responses request: ``instructions`` and a list of ``input`` items."""

    def __init__(self, seed: int) -> None:
        self.ids = Ids(seed)
        self.items: list[Json] = []

    def user(self, text: str, typed: bool = False) -> None:
        if typed:
            self.items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
        else:
            self.items.append({"role": "user", "content": text})

    def say(self, text: str) -> None:
        self.items.append({"type": "message", "id": self.ids.hex("msg_"), "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})

    def call(self, name: str, args: Json) -> str:
        call_id = self.ids.openai_call()
        self.items.append({"type": "function_call", "id": self.ids.hex("fc_"), "call_id": call_id, "name": name,
                           "arguments": arguments(args), "status": "completed"})
        return call_id

    def result(self, call_id: str, output: str) -> None:
        self.items.append({"type": "function_call_output", "call_id": call_id, "output": output})

    def step(self, name: str, args: Json, output: str) -> None:
        self.result(self.call(name, args), output)


class Anthropic:
    """An Anthropic Messages request: alternating user and assistant messages of blocks."""

    def __init__(self, seed: int) -> None:
        self.ids = Ids(seed)
        self.messages: list[Json] = []

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def turn(self, text: str | None, *calls: tuple[str, Json]) -> list[str]:
        """An assistant message: optional text, then one tool_use block per (name, input)."""
        blocks: list[Json] = [{"type": "text", "text": text}] if text else []
        ids = [self.ids.anthropic_tool() for _ in calls]
        blocks += [{"type": "tool_use", "id": tool_id, "name": name, "input": args}
                   for tool_id, (name, args) in zip(ids, calls, strict=True)]
        self.messages.append({"role": "assistant", "content": blocks})
        return ids

    def results(self, *results: Json, text: str | None = None) -> None:
        """A user message of tool_result blocks (made with ``tool_result``), then optional text."""
        blocks = list(results) + ([{"type": "text", "text": text}] if text else [])
        self.messages.append({"role": "user", "content": blocks})


def tool_result(tool_id: str, content: str | list[str], error: bool = False) -> Json:
    """A tool_result block: a string, or a list of strings sent as text blocks."""
    body: Any = content if isinstance(content, str) else [{"type": "text", "text": text} for text in content]
    block: Json = {"type": "tool_result", "tool_use_id": tool_id, "content": body}
    if error:
        block["is_error"] = True
    return block


def preset(title: str, description: str, order: int, model: str, threshold: int, keep_recent: int,
           conversation: Json, rules: Json | None = None) -> Json:
    data: Json = {"title": title, "description": description, "order": order, "model": model,
                  "threshold": threshold, "keep_recent": keep_recent}
    if rules is not None:
        data["rules"] = rules
    data["conversation"] = conversation
    return data


def text_table(headers: list[str], rows: list[list[Any]]) -> str:
    """Rows as psql prints them: right-aligned numbers, a row count at the end."""
    cells = [[str(value) for value in row] for row in rows]
    widths = [max(len(header), *(len(row[i]) for row in cells)) if cells else len(header)
              for i, header in enumerate(headers)]
    numeric = [bool(cells) and all(_is_number(row[i]) for row in cells) for i in range(len(headers))]

    def line(values: list[str], header: bool = False) -> str:
        parts = []
        for value, width, is_number in zip(values, widths, numeric, strict=True):
            parts.append(value.center(width) if header else value.rjust(width) if is_number else value.ljust(width))
        return " " + " | ".join(parts).rstrip()

    out = [line(headers, header=True), "-" + "-+-".join("-" * width for width in widths) + "-"]
    out += [line(row) for row in cells]
    out.append(f"({len(cells)} row{'' if len(cells) == 1 else 's'})")
    return "\n".join(out)


def _is_number(value: str) -> bool:
    try:
        float(value.replace(",", ""))
    except ValueError:
        return False
    return True


# =============================================================================================
# 1. The book's scenario: a report written with create_file, checked with searches and reads.

HEAT_PUMP_REPORT = prose("""
    # Air-Source Heat Pumps for Cold Climates

    ## Summary

    Air-source heat pumps have moved from a mild-climate technology to a credible primary heating system for
    regions where winter design temperatures fall to -20 °C and below. The change comes from variable-speed
    (inverter-driven) compressors, vapour-injection cycles and refrigerants that keep a useful pressure ratio in
    deep cold. A well-chosen and well-installed cold-climate unit delivers a seasonal coefficient of performance
    (COP) of roughly 2.5 to 3.2 in a continental climate: it supplies two and a half to three units of heat for
    each unit of electricity it draws. Results still vary widely between homes, and most of the spread is
    explained by sizing, installation quality and controls rather than by the brand on the outdoor unit. This
    report explains how the equipment behaves in the cold, what to ask for when sizing and installing it, what it
    costs to run, and what it means for the electricity grid.

    ## How a heat pump works when it is cold outside

    A heat pump moves heat rather than making it. Outdoors, refrigerant evaporates in a coil at a temperature
    below that of the outside air, picking up heat even when the air is well below freezing. The compressor
    raises the pressure, and therefore the temperature, of that vapour; indoors the refrigerant condenses and
    releases its heat to the room air or to a water circuit. The colder it is outside, the larger the temperature
    lift the compressor must provide and the more work it does per unit of heat delivered. That is why
    efficiency falls as the weather gets colder, and why the question for cold climates is not whether a heat
    pump works at -25 °C but how much heat it can deliver there, and at what efficiency.

    Older single-speed units were sized for mild weather and relied on electric resistance strips when the
    temperature dropped. Cold-climate models use compressors that can run faster than their nominal speed,
    enhanced vapour injection that cools the compressor and increases refrigerant flow, and larger outdoor coils.
    Together these keep capacity close to the rated value down to about -15 °C and deliver useful heat, at a
    lower COP, down to -25 or -30 °C.

    ## Capacity and efficiency at low temperatures

    Two numbers matter at every outdoor temperature: the maximum heat output and the COP at that output. Makers
    of cold-climate units typically publish capacity at 8 °C, -8 °C and -15 °C, and some also publish -25 °C. A
    representative 7 kW unit might deliver its full 7 kW at -8 °C with a COP of about 2.6, around 6.3 kW at
    -15 °C with a COP near 2.1, and 4.5 to 5 kW at -25 °C with a COP of 1.5 to 1.7. Even the worst of these
    figures is 50 to 70 percent better than electric resistance heat, whose COP is exactly 1.

    Seasonal performance is what the bill reflects. Because most heating hours in a cold climate fall between
    -10 °C and +5 °C, not at the design temperature, the seasonal COP sits much closer to the mild-weather
    figures than to the deep-cold ones. Monitoring in several northern programs has found seasonal values
    between 2.2 and 3.3 for ducted and ductless systems, with the low end usually traced to oversized units that
    cycle on and off, to low supply-air settings that bring on backup heat, or to duct losses in unheated spaces.

    ## Defrost

    When the outdoor coil runs below about 0 °C in humid air, frost forms on the fins and gradually blocks the
    airflow. The unit clears it by briefly reversing the cycle and sending hot refrigerant to the outdoor coil.
    During a defrost the indoor unit stops delivering heat, and may even draw a little, so defrost carries an
    energy penalty. Measured penalties range from about 5 to 15 percent of heating energy. They are largest
    between -5 °C and +2 °C in damp weather, when frost builds fastest, rather than in the coldest and driest
    conditions. Demand-based defrost controls, which start a cycle when sensors detect a blocked coil instead of
    on a fixed timer, reduce the penalty noticeably. Placement matters too: the outdoor unit must sit high enough
    above the snow for meltwater to drain instead of refreezing into an ice block under the coil, and it should
    be sheltered from the prevailing wind and from water running off the roof.

    ## Sizing and backup heat

    Sizing a cold-climate heat pump starts with a room-by-room heat-loss calculation, not with the capacity of
    the furnace being replaced, which is often two or three times larger than needed. The calculation gives the
    heat needed at the local design temperature, and the unit's published capacity at that temperature is
    compared with it. Three broad strategies exist. Full sizing picks a unit that meets the whole load at the
    design temperature, with no backup. Balanced sizing meets the load down to a balance point of around -15 to
    -20 °C and lets a small resistance heater or the existing furnace cover the coldest hours. Displacement
    sizing keeps the existing system as the primary one and uses the heat pump for most of the shoulder season.

    Balanced sizing is usually the best compromise. A unit sized for the last few degrees of the design
    temperature runs at low speed and in short cycles for most of the winter, which hurts efficiency and
    comfort. A resistance backup that runs for fifty hours a year adds little to the annual bill, but it does add
    to the peak load the grid sees, discussed below. When the existing furnace stays as backup, the controls need
    care: a badly set switchover temperature, or a thermostat that calls for the furnace whenever the setpoint is
    raised by a degree in the morning, can quietly erase most of the savings.

    ## Installation details that matter

    Field studies keep returning to the same handful of installation problems. Refrigerant lines that are longer
    than the manufacturer allows, or that were not evacuated properly, reduce capacity. Ductwork designed for a
    furnace's air at 50 °C may be too small for a heat pump's cooler air at 35 to 40 °C, which needs more airflow
    for the same heat. Outdoor units placed under the eaves get buried by ice from the roof. Condensate and
    defrost water need a clear, frost-free path away from the unit. Controls need to let the heat pump run long,
    slow cycles: thermostats set to deep night setbacks can trigger backup heat every morning as the system
    tries to recover several degrees at once.

    Commissioning is worth paying for. A commissioning report should record the refrigerant charge check, the
    measured airflow, the static pressure in the ducts, the switchover or lockout temperatures for backup heat,
    and the defrost settings. Without these it is hard to tell later whether poor performance comes from the
    equipment or from the installation.

    ## Costs and running costs

    Installed costs vary by region and by the condition of the house. Ductless single-zone systems commonly cost
    less than ducted whole-house systems, but a house with many closed rooms may need several indoor heads to
    reach every space, which quickly narrows the gap. Running costs depend on the ratio of the electricity price
    to the price of the fuel being displaced. A useful rule of thumb compares the electricity price divided by
    the seasonal COP with the fuel price divided by the efficiency of the existing appliance. With a seasonal COP
    of 2.8, a heat pump beats a 95 percent efficient gas furnace whenever electricity costs less than about three
    times as much per kilowatt-hour as gas. Against heating oil, propane and electric resistance, cold-climate
    heat pumps are usually cheaper to run in most markets.

    Time-of-use tariffs change the picture. A house with good thermal mass, or a hydronic system with a buffer
    tank, can preheat during cheaper hours and coast through the evening peak. The same flexibility matters to
    the grid.

    ## Hot water

    Many cold-climate households also replace a water heater. Heat pump water heaters with the unit indoors
    take their heat from the house, which in winter means partly from the space heating system; they work best
    in a basement or utility room that is above about 10 °C and at least 20 cubic metres in volume. Combined
    systems that heat both the house and a hot water cylinder from one outdoor unit avoid that trade-off, at a
    higher price.

    ## Impacts on the electricity grid

    Electrifying heat shifts the annual peak of many northern grids from summer afternoons to winter mornings.
    The coldest hours are exactly the hours when heat pumps are least efficient and backup heaters switch on, so
    the peak grows faster than annual consumption. Utilities studying high-adoption scenarios find that the size
    of the winter peak depends less on how many heat pumps are installed than on how they are sized and
    controlled: units that meet the load without resistance backup down to -20 °C, tighter building envelopes,
    and controls that avoid a synchronized morning recovery all flatten it. Programs that pair heat pump rebates
    with air sealing and attic insulation get more heat pump per kilowatt of peak.

    ## Recommendations

    1. Require a room-by-room heat-loss calculation, and choose a unit from published cold-climate performance
    data at the local design temperature.
    2. Prefer balanced sizing with a small, well-controlled backup over oversizing the heat pump for the coldest
    hour of the year.
    3. Check ducts for airflow capacity before reusing them, and budget for changes where needed.
    4. Mount outdoor units above the snow line, away from roof drip lines, with a clear drainage path for defrost
    water.
    5. Commission the system and keep the report; set backup lockout temperatures deliberately.
    6. Pair installations with air sealing and insulation where the budget allows: it lowers both the bill and
    the grid peak.
    7. Use thermostats that support heat pump recovery modes, and avoid deep night setbacks.

    Cold-climate heat pumps are a mature technology. The remaining risks lie mostly in design, installation and
    controls, and those are within the reach of program designers and contractors.
    """)


def search_listing(query: str, entries: list[tuple[str, str, str]]) -> str:
    """A search tool's plain-text answer: numbered title, URL and snippet."""
    lines = [f'Results for "{query}" ({len(entries)} results)', ""]
    for number, (title, url, snippet) in enumerate(entries, 1):
        lines += [f"{number}. {title}", f"   {url}", f"   {snippet}", ""]
    return "\n".join(lines).rstrip() + "\n"


HEAT_PUMP_SEARCH_1 = ("cold climate air source heat pump field monitoring seasonal COP", [
    ("Two winters of sub-metered data from 40 cold-climate heat pump homes",
     "https://www.example.org/research/ccashp-field-monitoring",
     "Seasonal COP ranged from 2.1 to 3.3 across ducted and ductless systems. The weakest sites combined oversized "
     "outdoor units with thermostats that allowed resistance backup to run above -10 °C; correcting the lockout "
     "setting alone raised one site's seasonal COP from 2.2 to 2.7."),
    ("Cold-climate heat pumps: what the monitoring data says (2024 update)",
     "https://energy.example.net/articles/cold-climate-heat-pumps-monitoring-2024",
     "A plain-language review of six northern field programs. Median seasonal COP 2.7; capacity at -15 °C averaged "
     "88 % of the rated 8 °C capacity for units on the cold-climate product list, but only 61 % for standard "
     "units installed in the same region."),
    ("Heat pump performance below -20 °C: lab and field comparison",
     "https://www.example.org/papers/hp-below-minus-20",
     "Lab-measured COP at -25 °C was 1.4 to 1.8 for the nine units tested. In the field, units rarely ran at full "
     "speed at those temperatures for long, because the coldest hours are few and usually occur at night."),
    ("Why your heat pump bill is higher than the installer said",
     "https://homeowners.example.com/blog/heat-pump-bill-surprises",
     "Common culprits: backup heat strips engaging on every morning recovery, ducts in an unheated attic, and a "
     "unit sized to the old furnace. A smart thermostat with a heat pump recovery mode fixed two of our three "
     "case studies."),
    ("Regional technical forum: cold-climate air-source heat pump savings estimate",
     "https://rtf.example.org/measures/ccashp-savings",
     "Deemed savings are based on a seasonal COP of 2.5 for ducted and 2.9 for ductless systems in heating "
     "zone 3, with 6 % of annual heat assumed to come from backup resistance."),
    ("Inverter compressors and vapour injection explained",
     "https://learn.example.net/hvac/inverter-vapour-injection",
     "Vapour injection returns part of the refrigerant to the compressor mid-compression, which lowers discharge "
     "temperature and lets the compressor keep capacity at large temperature lifts. Most cold-climate units now "
     "combine it with variable-speed drives."),
    ("Heat pumps in multifamily buildings: a field guide",
     "https://www.example.org/guides/multifamily-heat-pumps",
     "Covers central versus unit-by-unit systems, where to place outdoor units on flat roofs, snow and wind "
     "exposure, and metering for tenant billing."),
])

HEAT_PUMP_SEARCH_EMPTY = '"defrost penalty" "-27 °C" heat pump sub-metered 2024'

HEAT_PUMP_SEARCH_2 = ("heat pump defrost energy penalty field measurements humidity", [
    ("Measuring defrost losses in cold-climate heat pumps",
     "https://www.example.org/research/defrost-losses",
     "Defrost used 4 % to 13 % of heating energy across 18 monitored units. Losses peaked between -4 °C and "
     "+1 °C at relative humidity above 80 %; below -15 °C the air is so dry that frost builds slowly and defrost "
     "cycles become rare."),
    ("Demand defrost versus timed defrost: one winter side by side",
     "https://energy.example.net/articles/demand-vs-timed-defrost",
     "Two identical units on the same wall, one switched to a 60-minute timer. The timed unit ran 2.3 times as "
     "many defrost cycles and used 7 % more electricity for the same delivered heat."),
    ("Outdoor unit placement in snowy regions",
     "https://contractors.example.com/guides/outdoor-unit-placement-snow",
     "Mount the unit on a stand or wall bracket at least 30 cm above the expected snow depth, keep it out of the "
     "drip line of the roof, and give defrost water a path that does not cross a walkway, where it refreezes."),
    ("Ask an engineer: does my heat pump waste energy when it defrosts?",
     "https://homeowners.example.com/ask/defrost-energy",
     "Some, yes, but usually less than people think. A typical cycle lasts 3 to 8 minutes; the bigger risk is a "
     "unit that cannot drain its meltwater and builds an ice dam under the coil."),
    ("Frost formation on finned-tube evaporators: a review",
     "https://journals.example.org/hvac/frost-formation-review",
     "Frost growth depends on coil surface temperature, air humidity and fin spacing. Hydrophobic coatings delay "
     "frost onset but do not remove the need for defrost."),
    ("Winter performance report, pilot program year 2",
     "https://utility.example.net/reports/heat-pump-pilot-year-2",
     "Across 112 homes, defrost accounted for an estimated 6.8 % of compressor energy. Three homes with icing "
     "problems had units mounted on ground pads without stands; moving them fixed the issue."),
])


def site_measurements(seed: int = 11) -> str:
    """Hourly readings from one monitored home on a cold day, with realistic noise."""
    rng = random.Random(seed)
    rows = ["timestamp,site,outdoor_c,supply_c,return_c,heat_kw,power_kw,cop,defrost"]
    outdoor = [-17.8, -18.6, -19.4, -20.1, -20.9, -21.3, -21.6, -21.2, -19.8, -17.5, -15.2, -13.1, -11.8, -11.0,
               -10.6, -11.2, -12.5, -14.0, -15.3, -16.4, -17.2, -17.9, -18.3, -18.8]
    for hour, temp in enumerate(outdoor):
        cop = max(1.3, 2.75 + 0.055 * temp + rng.uniform(-0.08, 0.08))
        heat = 6.9 - 0.04 * (temp + 15) + rng.uniform(-0.25, 0.25) + (0.6 if 5 <= hour <= 7 else 0)
        power = heat / cop
        defrost = 1 if rng.random() < (0.08 if temp < -15 else 0.22) else 0
        supply = 36.0 + rng.uniform(-1.2, 1.2) - (4.5 if defrost else 0)
        supply_return = supply - 5.6 + rng.uniform(-0.4, 0.4)
        rows.append(f"2024-01-17T{hour:02d}:00,hp-site-07,{temp:.1f},{supply:.1f},{supply_return:.1f},"
                    f"{heat:.2f},{power:.2f},{cop:.2f},{defrost}")
    return "\n".join(rows) + "\n"


def book_report() -> Json:
    path = "reports/heat-pumps-cold-climates.md"
    chat = Chat(101, "You are a research assistant with access to a workspace and the web. Write long documents "
                     "to files with create_file instead of pasting them into the chat, verify claims with "
                     "search_web, and keep your chat replies short.")
    chat.user("I need a report of about 10,000 characters on air-source heat pumps for cold climates (think "
              "-20 °C winters): how they perform, sizing and backup heat, defrost, installation pitfalls, running "
              f"costs and grid impacts. Save it as {path}. Then check the key numbers against recent field data; "
              "the monitoring export from our pilot site is in data/site-07-2024-01-17.csv.")
    chat.step("create_file", {"file_path": path, "content": HEAT_PUMP_REPORT},
              f"Saved {path} ({len(HEAT_PUMP_REPORT):,} characters, {HEAT_PUMP_REPORT.count(chr(10)) + 1} lines).",
              text="I'll draft the full report first and save it, then verify the figures.")
    query, entries = HEAT_PUMP_SEARCH_1
    chat.step("search_web", {"query": query}, search_listing(query, entries),
              text="The report is saved. Now checking the seasonal COP and capacity figures against field data.")
    chat.say("The monitoring results match the report: seasonal COP of 2.1 to 3.3, with the low end explained by "
             "oversizing and backup-heat settings. Next I'll check the defrost penalty, which I gave as 5 to 15 %.")
    chat.step("search_web", {"query": HEAT_PUMP_SEARCH_EMPTY}, "No results found.")
    query, entries = HEAT_PUMP_SEARCH_2
    chat.step("search_web", {"query": query}, search_listing(query, entries),
              text="That query was too narrow. Trying a broader one.")
    chat.say("Field measurements put defrost at 4 to 13 % of heating energy, peaking between -4 °C and +1 °C in "
             "humid weather, so the report's range is slightly high. Let me re-read the defrost section and "
             "compare it with your site's data.")
    csv_path = "data/site-07-2024-01-17.csv"
    chat.step("read_file", {"file_path": path}, HEAT_PUMP_REPORT)
    chat.step("read_file", {"file_path": csv_path}, site_measurements())
    chat.say("I checked the report against the field data and your site export.\n\n"
             "- **Seasonal COP (2.5 to 3.2)**: consistent with the monitoring programs (median 2.7, range 2.1 "
             "to 3.3).\n"
             "- **Defrost penalty (5 to 15 %)**: recent measurements give 4 to 13 %; I suggest changing the range "
             "and adding that demand defrost used 7 % less electricity than a timer in a side-by-side test.\n"
             "- **Your site, 17 January**: outdoor temperatures from -21.6 °C to -10.6 °C, hourly COP from about "
             "1.6 at the coldest hour to 2.2 in the afternoon, and only a few defrost cycles, which fits the "
             "observation that dry, very cold air builds frost slowly. The morning rows (05:00 to 07:00) show "
             "higher output: that looks like recovery from a night setback, which the report warns about.\n\n"
             "Shall I update the defrost section and add the site data as a short case study?")
    chat.user("Yes, please update the defrost section. Also add a short paragraph comparing ground-source heat "
              "pumps: when is the extra cost worth it in a climate like ours?")
    return preset(
        "The book's report",
        "The scenario from the book: a ~10,000-character report is written with create_file, then checked with "
        "web searches and file reads. Over the threshold, the report body in the create_file call becomes "
        "'[Content saved to file]' and each read and search result becomes a one-line reference; the search that "
        "found nothing is left alone, because its reference would be longer than the result.",
        1, "gpt-4o", 5_000, 0, chat.request("gpt-4o", chat_tools("create_file", "read_file", "search_web")))


# =============================================================================================
# 2. A coding agent fixing a bug: real-looking source files and pytest runs.

LEDGER_PARSE = r'''"""Read bank CSV exports into Transaction records.

Banks disagree on almost everything: the delimiter, the date format, the decimal mark, whether
debits are negative or live in a column of their own. ``read_statement`` sniffs what it can from
the file and takes the rest from a ``BankProfile`` (see ``csvledger.profiles``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path

__all__ = ["BankProfile", "ParseError", "Transaction", "parse_amount", "parse_date", "read_statement", "total"]

_CURRENCY = re.compile(r"[€$£]|\b(?:EUR|USD|GBP|CHF)\b")
_BLANKS = re.compile(r"[\s\u00a0\u202f']")  # spaces, no-break spaces and Swiss apostrophes group digits


class ParseError(ValueError):
    """A value or row we could not read; ``line`` is the line in the source file, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class BankProfile:
    """How one bank lays out its export."""

    name: str
    date_column: str
    description_column: str
    amount_column: str | None = None  # one signed column...
    debit_column: str | None = None  # ...or separate debit and credit columns
    credit_column: str | None = None
    date_formats: tuple[str, ...] = ("%Y-%m-%d",)
    encoding: str = "utf-8-sig"
    skip_lines: int = 0  # preamble before the header row (account number, period...)
    delimiter: str | None = None  # None: sniff it from the first 4 kB

    def __post_init__(self) -> None:
        split = self.debit_column is not None or self.credit_column is not None
        if (self.amount_column is not None) == split:
            raise ValueError(f"{self.name}: give amount_column, or debit_column and credit_column")


@dataclass(frozen=True)
class Transaction:
    booked: date
    amount: Decimal
    description: str
    raw: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_debit(self) -> bool:
        return self.amount < 0


def parse_amount(text: str) -> Decimal:
    """A money amount as banks print it: '1,250.75', '-12.00 EUR', '(45.10)', '45.10-', '€ 0,99'.

    Parentheses and a trailing minus mean a negative amount. A comma is read as the decimal
    mark when it is the only separator and is not followed by exactly three digits; otherwise
    commas group thousands.
    """
    cleaned = _CURRENCY.sub("", text).strip()
    negative = False
    if cleaned.startswith("(") and cleaned.endswith(")"):
        negative, cleaned = True, cleaned[1:-1].strip()
    if cleaned.endswith("-"):
        negative, cleaned = True, cleaned[:-1].strip()
    cleaned = _BLANKS.sub("", cleaned)
    if not cleaned:
        raise ParseError(f"not an amount: {text!r}")
    head, _, tail = cleaned.rpartition(",")
    if head and "." not in cleaned and cleaned.count(",") == 1 and len(tail) != 3:
        cleaned = head + "." + tail  # '3,5', '0,99': a decimal comma
    else:
        cleaned = cleaned.replace(",", "")  # '1,250', '1,250.75': commas group thousands
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ParseError(f"not an amount: {text!r}") from None
    return -value if negative else value


def parse_date(text: str, formats: tuple[str, ...]) -> date:
    """``text`` read with the first of ``formats`` that fits it."""
    value = text.strip()
    for fmt in formats:
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    raise ParseError(f"date {text!r} matches none of {', '.join(formats)}")


def read_statement(path: Path | str, profile: BankProfile) -> list[Transaction]:
    """Every transaction in the export at ``path``, in file order."""
    text = Path(path).read_text(encoding=profile.encoding)
    return list(iter_transactions(text, profile))


def iter_transactions(text: str, profile: BankProfile) -> Iterator[Transaction]:
    body = "".join(text.splitlines(keepends=True)[profile.skip_lines:])
    delimiter = profile.delimiter or _sniff_delimiter(body[:4096])
    reader = csv.DictReader(io.StringIO(body), delimiter=delimiter)
    _check_columns(list(reader.fieldnames or []), profile)
    for row in reader:
        if _is_blank(row):
            continue
        try:
            yield _transaction(row, profile)
        except ParseError as exc:
            raise ParseError(str(exc), profile.skip_lines + reader.line_num) from None


def total(transactions: Iterable[Transaction]) -> Decimal:
    return sum((t.amount for t in transactions), Decimal("0"))


def _sniff_delimiter(sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=";,\t|").delimiter
    except csv.Error:
        return ";" if sample.count(";") > sample.count(",") else ","


def _check_columns(names: list[str], profile: BankProfile) -> None:
    wanted = [profile.date_column, profile.description_column, profile.amount_column, profile.debit_column,
              profile.credit_column]
    missing = [name for name in wanted if name is not None and name not in names]
    if missing:
        raise ParseError(f"{profile.name}: missing column(s) {', '.join(missing)}; "
                         f"the file has {', '.join(names) or 'no header'}")


def _is_blank(row: dict[str, str | None]) -> bool:
    return all(not (value or "").strip() for value in row.values())


def _transaction(row: dict[str, str], profile: BankProfile) -> Transaction:
    booked = parse_date(row[profile.date_column], profile.date_formats)
    if profile.amount_column is not None:
        amount = parse_amount(row[profile.amount_column])
    else:
        debit = (row.get(profile.debit_column or "") or "").strip()
        credit = (row.get(profile.credit_column or "") or "").strip()
        if debit and credit:
            raise ParseError("both a debit and a credit amount")
        amount = -abs(parse_amount(debit)) if debit else parse_amount(credit or "0")
    description = " ".join(row[profile.description_column].split())
    return Transaction(booked, amount, description, dict(row))
'''

LEDGER_PROFILES = r'''"""Export layouts of the banks we have seen, keyed by the short name used on the command line.

To add a bank, export a month of transactions, look at the header row and the first few lines in
a text editor (not a spreadsheet, which reformats numbers and dates), and add a profile here with
a test file in tests/data/.
"""

from __future__ import annotations

from .parse import BankProfile

PROFILES: dict[str, BankProfile] = {
    "generic": BankProfile(
        "Generic (ISO dates, one signed amount column)",
        date_column="Date",
        description_column="Description",
        amount_column="Amount",
    ),
    "northbank": BankProfile(
        "Northbank current account",
        date_column="Posting Date",
        description_column="Details",
        debit_column="Debit",
        credit_column="Credit",
        date_formats=("%m/%d/%Y",),
    ),
    "rheinbank": BankProfile(
        "Rheinbank Girokonto (CSV export)",
        date_column="Buchungstag",
        description_column="Verwendungszweck",
        amount_column="Betrag (EUR)",
        date_formats=("%d.%m.%y", "%d.%m.%Y"),
        encoding="cp1252",
        skip_lines=4,
        delimiter=";",
    ),
    "alpina": BankProfile(
        "Alpina Privatkonto",
        date_column="Valuta",
        description_column="Text",
        debit_column="Belastung",
        credit_column="Gutschrift",
        date_formats=("%d.%m.%Y",),
        delimiter=";",
    ),
    "caisse-ouest": BankProfile(
        "Caisse de l'Ouest, compte courant",
        date_column="Date opération",
        description_column="Libellé",
        debit_column="Débit",
        credit_column="Crédit",
        date_formats=("%d/%m/%Y",),
        encoding="latin-1",
        delimiter=";",
    ),
    "nordbank": BankProfile(
        "Nordbank privatkonto",
        date_column="Bokföringsdag",
        description_column="Text",
        amount_column="Belopp",
        date_formats=("%Y-%m-%d",),
        delimiter=";",
    ),
}


# Header rows as the banks write them, for `csvledger detect FILE`.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "northbank": ("Posting Date", "Details", "Debit", "Credit"),
    "rheinbank": ("Buchungstag", "Valutadatum", "Verwendungszweck", "Betrag (EUR)"),
    "alpina": ("Valuta", "Text", "Belastung", "Gutschrift"),
    "caisse-ouest": ("Date opération", "Libellé", "Débit", "Crédit"),
    "nordbank": ("Bokföringsdag", "Text", "Belopp"),
}


def detect(header: list[str]) -> str | None:
    """The profile whose signature columns all appear in ``header``, if exactly one matches."""
    columns = {name.strip() for name in header}
    matches = [name for name, signature in SIGNATURES.items() if set(signature) <= columns]
    return matches[0] if len(matches) == 1 else None


class UnknownBank(KeyError):
    def __str__(self) -> str:
        return f"unknown bank {self.args[0]!r}; known: {', '.join(sorted(PROFILES))}"


def get_profile(name: str) -> BankProfile:
    try:
        return PROFILES[name.lower()]
    except KeyError:
        raise UnknownBank(name) from None


def describe() -> str:
    """One line per profile, for ``csvledger banks``."""
    width = max(len(name) for name in PROFILES)
    return "\n".join(f"{name.ljust(width)}  {profile.name}" for name, profile in sorted(PROFILES.items()))
'''

LEDGER_TESTS = r'''from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from csvledger.parse import BankProfile, ParseError, parse_amount, parse_date, read_statement, total

GENERIC = BankProfile("test", date_column="Date", description_column="Description", amount_column="Amount")

AMOUNTS = [
    ("12.50", "12.50"),
    ("-12.50", "-12.50"),
    ("1,250", "1250"),
    ("1,250.75", "1250.75"),
    ("(45.10)", "-45.10"),
    ("45.10-", "-45.10"),
    ("EUR 3,5", "3.5"),
    ("€ 0,99", "0.99"),
    ("1 024.00", "1024.00"),
    ("CHF 1'480.00", "1480.00"),
    ("$2,000,000", "2000000"),
]


@pytest.mark.parametrize(("text", "expected"), AMOUNTS)
def test_parse_amount(text: str, expected: str) -> None:
    assert parse_amount(text) == Decimal(expected)


@pytest.mark.parametrize("text", ["", "  ", "EUR", "twelve", "1.2.3"])
def test_parse_amount_rejects(text: str) -> None:
    with pytest.raises(ParseError):
        parse_amount(text)


@pytest.mark.parametrize(("text", "formats", "expected"), [
    ("2024-03-01", ("%Y-%m-%d",), date(2024, 3, 1)),
    ("01.03.24", ("%d.%m.%y", "%d.%m.%Y"), date(2024, 3, 1)),
    ("01.03.2024", ("%d.%m.%y", "%d.%m.%Y"), date(2024, 3, 1)),
    ("3/1/2024", ("%m/%d/%Y",), date(2024, 3, 1)),
])
def test_parse_date(text: str, formats: tuple[str, ...], expected: date) -> None:
    assert parse_date(text, formats) == expected


def test_parse_date_names_the_formats_it_tried() -> None:
    with pytest.raises(ParseError, match="matches none of %d.%m.%Y"):
        parse_date("2024/03/01", ("%d.%m.%Y",))


def export(tmp_path: Path, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / "export.csv"
    path.write_text(text, encoding=encoding)
    return path


def test_read_statement_sniffs_semicolons(tmp_path: Path) -> None:
    path = export(tmp_path, "Date;Description;Amount\n2024-03-01;Coffee;-3.20\n2024-03-02;Salary;2100.00\n")
    rows = read_statement(path, GENERIC)
    assert [t.amount for t in rows] == [Decimal("-3.20"), Decimal("2100.00")]
    assert rows[0].description == "Coffee" and rows[0].is_debit


def test_blank_rows_are_skipped(tmp_path: Path) -> None:
    path = export(tmp_path, "Date,Description,Amount\n2024-03-01,Coffee,-3.20\n,,\n\n2024-03-04,Bus,-2.80\n")
    assert len(read_statement(path, GENERIC)) == 2


def test_debit_and_credit_columns(tmp_path: Path) -> None:
    profile = BankProfile("split", date_column="Date", description_column="Details", debit_column="Debit",
                          credit_column="Credit")
    path = export(tmp_path, "Date,Details,Debit,Credit\n2024-03-01,Rent,950.00,\n2024-03-03,Refund,,12.40\n")
    assert [t.amount for t in read_statement(path, profile)] == [Decimal("-950.00"), Decimal("12.40")]


def test_errors_name_the_line(tmp_path: Path) -> None:
    path = export(tmp_path, "Date,Description,Amount\n2024-03-01,Coffee,-3.20\n2024-13-01,Typo,1.00\n")
    with pytest.raises(ParseError, match="line 3"):
        read_statement(path, GENERIC)


def test_missing_column_is_reported(tmp_path: Path) -> None:
    path = export(tmp_path, "Datum,Text,Betrag\n01.03.2024,Kaffee,-3.20\n")
    with pytest.raises(ParseError, match="missing column"):
        read_statement(path, GENERIC)


def test_total(tmp_path: Path) -> None:
    path = export(tmp_path, "Date,Description,Amount\n2024-03-01,A,-3.20\n2024-03-02,B,10.00\n2024-03-03,C,-1.05\n")
    assert total(read_statement(path, GENERIC)) == Decimal("5.75")


def test_skip_lines_before_the_header(tmp_path: Path) -> None:
    profile = BankProfile("preamble", date_column="Date", description_column="Description", amount_column="Amount",
                          skip_lines=2, delimiter=";")
    path = export(tmp_path, "Account;DE00 1234\nPeriod;2024-03\nDate;Description;Amount\n2024-03-01;Coffee;-3,20\n")
    assert [t.amount for t in read_statement(path, profile)] == [Decimal("-3.20")]


def test_raw_row_is_kept_but_not_compared(tmp_path: Path) -> None:
    path = export(tmp_path, "Date,Description,Amount,Ref\n2024-03-01,Coffee,-3.20,A1\n")
    (row,) = read_statement(path, GENERIC)
    assert row.raw["Ref"] == "A1"
    assert row == type(row)(row.booked, row.amount, row.description)


def test_descriptions_are_normalised(tmp_path: Path) -> None:
    path = export(tmp_path, 'Date,Description,Amount\n2024-03-01,"  Card   payment\n  Bakery ",-4.10\n')
    assert read_statement(path, GENERIC)[0].description == "Card payment Bakery"
'''

LEDGER_TREE = dedent("""
    csvledger/
    ├── README.md
    ├── pyproject.toml
    ├── csvledger/
    │   ├── __init__.py
    │   ├── __main__.py
    │   ├── categorize.py
    │   ├── cli.py
    │   ├── parse.py
    │   ├── profiles.py
    │   └── report.py
    ├── rules/
    │   └── default.toml
    └── tests/
        ├── conftest.py
        ├── data/
        │   ├── alpina-2024-01.csv
        │   ├── northbank-2024-02.csv
        │   └── rheinbank-2024-02.csv
        ├── test_categorize.py
        ├── test_cli.py
        ├── test_parse.py
        └── test_report.py

    4 directories, 18 files
    """)

NEW_AMOUNTS = ('    ("$2,000,000", "2000000"),\n]',
               '    ("$2,000,000", "2000000"),\n'
               '    # A decimal comma with dots grouping thousands (German, Dutch, Danish... exports).\n'
               '    ("1.234,56", "1234.56"),\n'
               '    ("-2.500,00", "-2500.00"),\n'
               '    ("1.234.567,89", "1234567.89"),\n]')

FIX_OLD = (
    '    head, _, tail = cleaned.rpartition(",")\n'
    '    if head and "." not in cleaned and cleaned.count(",") == 1 and len(tail) != 3:\n'
    "        cleaned = head + \".\" + tail  # '3,5', '0,99': a decimal comma\n"
    '    else:\n'
    "        cleaned = cleaned.replace(\",\", \"\")  # '1,250', '1,250.75': commas group thousands\n"
)
FIX_FIRST_HEAD = (
    '    if cleaned.rfind(",") > cleaned.rfind("."):\n'
    "        # The comma comes last, so it is the decimal mark and any dots group thousands:\n"
    "        # '3,5', '0,99', '1.234,56', '1.234.567,89'.\n"
)
FIX_FIRST = FIX_FIRST_HEAD + (
    '        cleaned = cleaned.replace(".", "").replace(",", ".")\n'
    '    else:\n'
    "        cleaned = cleaned.replace(\",\", \"\")  # '1,250.75': commas group thousands\n"
)
FIX_SECOND = (
    '    if cleaned.rfind(",") > cleaned.rfind(".") and not _COMMA_THOUSANDS.fullmatch(cleaned):\n'
    "        # The comma comes last and does more than group thousands ('1,250', '2,000,000'), so it\n"
    "        # is the decimal mark and any dots group thousands: '3,5', '0,99', '1.234,56'.\n"
)
REGEX_OLD = ('_BLANKS = re.compile(r"[\\s\\u00a0\\u202f\']")'
             "  # spaces, no-break spaces and Swiss apostrophes group digits")
REGEX_NEW = REGEX_OLD + '\n_COMMA_THOUSANDS = re.compile(r"-?\\d{1,3}(?:,\\d{3})+")  # \'1,250\', \'-2,000,000\''


def _line_of(source: str, needle: str) -> int:
    return source.split("\n").index(next(line for line in source.split("\n") if needle in line)) + 1


def _function_source(source: str, name: str, upto: str) -> str:
    """A function's source up to the line holding ``upto``, that line marked as pytest marks it."""
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = next(i for i in range(start, len(lines)) if upto in lines[i])
    shown = ["    " + line if line else "" for line in lines[start:end]]
    return "\n".join(shown) + "\n>   " + lines[end]


def _pytest_header(title: str) -> str:
    return f" {title} ".center(80, "_")


def _amount_test(test_id: str, text: str, expected: str) -> list[str]:
    """The lines pytest prints first for a failing parametrized amount test."""
    return [
        _pytest_header(f"test_parse_amount[{test_id}]"),
        "",
        f"text = {text!r}, expected = {expected!r}",
        "",
        '    @pytest.mark.parametrize(("text", "expected"), AMOUNTS)',
        "    def test_parse_amount(text: str, expected: str) -> None:",
        ">       assert parse_amount(text) == Decimal(expected)",
    ]


def _amount_failure(test_id: str, text: str, expected: str, got: str, test_line: int) -> str:
    return "\n".join([
        *_amount_test(test_id, text, expected),
        f"E       AssertionError: assert Decimal({got!r}) == Decimal({expected!r})",
        f"E        +  where Decimal({got!r}) = parse_amount({text!r})",
        f"E        +  and   Decimal({expected!r}) = Decimal({expected!r})",
        "",
        f"tests/test_parse.py:{test_line}: AssertionError",
    ])


def _amount_error(test_id: str, text: str, expected: str, source: str, test_line: int) -> str:
    raise_line = _line_of(source, 'raise ParseError(f"not an amount: {text!r}") from None')
    return "\n".join([
        *_amount_test(test_id, text, expected),
        "",
        f"tests/test_parse.py:{test_line}: ",
        "_ " * 39 + "_",
        "",
        f"text = {text!r}",
        "",
        _function_source(source, "parse_amount", 'raise ParseError(f"not an amount: {text!r}") from None'),
        f"E           csvledger.parse.ParseError: not an amount: {text!r}",
        "",
        f"csvledger/parse.py:{raise_line}: ParseError",
    ])


def _pytest_run(progress: str, failures: list[str], summary: list[str], outcome: str) -> str:
    lines = [progress.ljust(72) + " [100%]"]
    if failures:
        lines.append(" FAILURES ".center(80, "="))
        lines += failures
        lines.append(" short test summary info ".center(80, "="))
        lines += summary
    lines.append(outcome)
    return "\n".join(lines) + "\n"


def apply_edit(source: str, path: str, old: str, new: str) -> tuple[str, str]:
    """``source`` with the one occurrence of ``old`` replaced, and edit_file's answer."""
    if source.count(old) != 1:
        raise ValueError(f"edit to {path}: old_str occurs {source.count(old)} times")
    first = source[:source.index(old)].count("\n") + 1
    old_lines, new_lines = old.rstrip("\n").count("\n") + 1, new.rstrip("\n").count("\n") + 1

    def span(n: int) -> str:
        return f"line {first}" if n == 1 else f"lines {first}-{first + n - 1}"

    return (source.replace(old, new),
            f"Edited {path}: 1 occurrence replaced ({span(old_lines)} became {span(new_lines)}).")


def coding_agent() -> Json:
    tests_after, test_edit = apply_edit(LEDGER_TESTS, "tests/test_parse.py", *NEW_AMOUNTS)
    test_line = _line_of(tests_after, "assert parse_amount(text) == Decimal(expected)")
    parse_first, fix_edit = apply_edit(LEDGER_PARSE, "csvledger/parse.py", FIX_OLD, FIX_FIRST)
    parse_regex, regex_edit = apply_edit(parse_first, "csvledger/parse.py", REGEX_OLD, REGEX_NEW)
    _, second_edit = apply_edit(parse_regex, "csvledger/parse.py", FIX_FIRST_HEAD, FIX_SECOND)
    run_1 = _pytest_run(
        "..........." + "FFF" + "." * 19,
        [_amount_failure("1.234,56-1234.56", "1.234,56", "1234.56", "1.23456", test_line),
         _amount_failure("-2.500,00--2500.00", "-2.500,00", "-2500.00", "-2.50000", test_line),
         _amount_error("1.234.567,89-1234567.89", "1.234.567,89", "1234567.89", LEDGER_PARSE, test_line)],
        ["FAILED tests/test_parse.py::test_parse_amount[1.234,56-1234.56] - AssertionError: assert "
         "Decimal('1.23456') == Decimal('1234.56')",
         "FAILED tests/test_parse.py::test_parse_amount[-2.500,00--2500.00] - AssertionError: assert "
         "Decimal('-2.50000') == Decimal('-2500.00')",
         "FAILED tests/test_parse.py::test_parse_amount[1.234.567,89-1234567.89] - csvledger.parse.ParseError: "
         "not an amount: '1.234.567,89'"],
        "3 failed, 30 passed in 0.31s")
    run_2 = _pytest_run(
        "..F.......F" + "." * 22,
        [_amount_failure("1,250-1250", "1,250", "1250", "1.250", test_line),
         _amount_error("$2,000,000-2000000", "$2,000,000", "2000000", parse_first, test_line)],
        ["FAILED tests/test_parse.py::test_parse_amount[1,250-1250] - AssertionError: assert Decimal('1.250') == "
         "Decimal('1250')",
         "FAILED tests/test_parse.py::test_parse_amount[$2,000,000-2000000] - csvledger.parse.ParseError: not an "
         "amount: '$2,000,000'"],
        "2 failed, 31 passed in 0.29s")
    run_3 = _pytest_run("." * 33, [], [], "33 passed in 0.24s")
    run_all = "\n".join([
        "." * 72 + " [ 83%]",
        "." * 14 + " " * 58 + " [100%]",
        " warnings summary ".center(80, "="),
        "tests/test_report.py::test_monthly_summary_header",
        "  /home/dev/csvledger/csvledger/report.py:41: DeprecationWarning: datetime.datetime.utcnow() is deprecated "
        "and scheduled for removal in a future version. Use timezone-aware objects to represent datetimes in UTC: "
        "datetime.datetime.now(datetime.UTC).",
        '    generated = datetime.utcnow().strftime("%Y-%m-%d %H:%M")',
        "",
        "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html",
        "86 passed, 1 warning in 0.97s",
    ]) + "\n"

    chat = Chat(202, "You are a coding agent working in a Python repository at /home/dev/csvledger. Read the code "
                     "before changing it, reproduce a bug with a failing test before fixing it, make the smallest "
                     "change that fixes it, and run the tests after every change. Use edit_file for changes; never "
                     "rewrite whole files.")
    chat.user("Importing my Rheinbank export gives wrong totals. A line like\n\n"
              "    05.02.24;05.02.24;Miete Februar;-1.234,56;EUR\n\n"
              "comes out as -1.23, and the monthly total is off by about 2,400 €. Amounts under 1,000 look fine. "
              "Can you find and fix it? Tests are in tests/.")
    chat.step("list_dir", {"path": ".", "depth": 3}, LEDGER_TREE,
              text="I'll start with the layout of the repository.")
    read_parse, read_profiles = chat.call(("read_file", {"path": "csvledger/parse.py"}),
                                          ("read_file", {"path": "csvledger/profiles.py"}),
                                          text="Parsing lives in csvledger/parse.py and bank layouts in "
                                               "csvledger/profiles.py. Reading both.")
    chat.result(read_parse, LEDGER_PARSE)
    chat.result(read_profiles, LEDGER_PROFILES)
    chat.step("read_file", {"path": "tests/test_parse.py"}, LEDGER_TESTS,
              text="Found the likely cause. In `parse_amount`, a comma is only treated as a decimal mark when there "
                   "is no dot in the amount. `-1.234,56` has both, so the comma is dropped as a thousands "
                   "separator and the result is `-1.23456`, shown as -1.23. Amounts under 1,000 have no dot, which "
                   "is why they look right. Let me check the existing tests before changing anything.")
    chat.step("edit_file", {"path": "tests/test_parse.py", "old_str": NEW_AMOUNTS[0], "new_str": NEW_AMOUNTS[1]},
              test_edit,
              text="None of the test amounts combine a decimal comma with dots. Adding three failing cases first.")
    chat.step("run_tests", {"command": "pytest -q tests/test_parse.py"}, run_1)
    chat.step("edit_file", {"path": "csvledger/parse.py", "old_str": FIX_OLD, "new_str": FIX_FIRST},
              fix_edit,
              text="Reproduced: all three new cases fail, one with a ParseError. The rule should be: whichever "
                   "separator comes last is the decimal mark. Changing that branch.")
    chat.step("run_tests", {"command": "pytest -q tests/test_parse.py"}, run_2)
    regex_call, fix_call = chat.call(
        ("edit_file", {"path": "csvledger/parse.py", "old_str": REGEX_OLD, "new_str": REGEX_NEW}),
        ("edit_file", {"path": "csvledger/parse.py", "old_str": FIX_FIRST_HEAD, "new_str": FIX_SECOND}),
        text="The new cases pass, but I broke two old ones: a lone comma followed by groups of exactly three "
             "digits (`1,250`, `2,000,000`) groups thousands, as the old code assumed. I'll keep that case with a "
             "pattern for comma-grouped integers and use the last-separator rule otherwise.")
    chat.result(regex_call, regex_edit)
    chat.result(fix_call, second_edit)
    chat.step("run_tests", {"command": "pytest -q tests/test_parse.py"}, run_3)
    chat.step("run_tests", {"command": "pytest -q"}, run_all,
              text="All 33 parser tests pass. Running the whole suite to make sure nothing else relied on the old "
                   "behaviour.")
    rules = {
        "tool_calls": [
            {"tool": "edit_file", "argument": "old_str", "replacement": "[replaced text: re-read {path} if needed]"},
            {"tool": "edit_file", "argument": "new_str", "replacement": "[edit applied to {path}]"},
        ],
        "tool_results": [
            {"tool": "read_file", "template": "File content from {path}. Re-read if needed."},
            {"tool": "run_tests", "template": "Test run `{command}`: {lines} lines of output omitted. "
                                              "Re-run if needed."},
            {"tool": "list_dir", "template": "Directory listing of {path} omitted. List it again if needed."},
        ],
    }
    return preset(
        "Coding agent: a parsing bug",
        "A coding agent reads source files (two of them in one parallel step), adds failing tests, edits code and "
        "re-runs pytest. File reads, test output, the directory listing and the text of applied edits become "
        "references; the last test run is kept because the model has not read it yet, and a two-line passing run "
        "is kept because its reference would be longer.",
        2, "gpt-4.1", 5_000, 0,
        chat.request("gpt-4.1", chat_tools("read_file_path", "edit_file", "run_tests", "list_dir")), rules)


# =============================================================================================
# 3. A research agent on the Responses API: many searches, long fetched pages, a summary.

GREEN_ROOF_SEARCHES: list[tuple[str, list[tuple[str, str, str, float]]]] = [
    ("green roof stormwater retention annual percentage field studies", [
        ("Ten years of green roof monitoring: what the rain gauges show",
         "https://www.example.org/stormwater/green-roof-monitoring-decade",
         "Across 14 monitored extensive roofs with 80-150 mm of substrate, annual retention ranged from 38 % to 64 % "
         "of rainfall. Retention was highest in summer, when evapotranspiration dries the substrate between storms, "
         "and lowest in late autumn and winter, when the medium stays near field capacity for weeks.", 0.91),
        ("How much rain does a green roof really hold? A review of 75 studies",
         "https://journals.example.com/urban-water/green-roof-retention-review",
         "Median annual retention was 56 % for extensive and 72 % for intensive systems, but the spread was wide. "
         "Climate explained more of the variation than any design variable: roofs in dry-summer climates "
         "retained more than roofs in climates with frequent, evenly spread rain.", 0.89),
        ("Green roofs in cold climates: retention through the seasons",
         "https://nordic-water.example.net/articles/green-roofs-cold-climate",
         "Frozen substrate retains little. On roofs monitored over three winters, snowmelt events produced runoff "
         "volumes close to those of a conventional roof, so annual figures from warm-climate studies overstate "
         "performance in the north.", 0.83),
        ("Stormwater credit for vegetated roofs: technical guidance",
         "https://www.example.org/guidance/vegetated-roof-stormwater-credit",
         "For sizing purposes, a vegetated roof with at least 100 mm of growing medium may be counted as capturing "
         "the first 15 mm of each storm; larger events are assumed to run off at 50 % of the rate of a "
         "conventional roof.", 0.77),
    ]),
    ("extensive vs intensive green roof runoff reduction substrate depth", [
        ("Substrate depth and runoff: a rooftop experiment with six plots",
         "https://greenroof-lab.example.org/trials/substrate-depth-trial",
         "Plots with 50, 100 and 150 mm of the same mineral substrate retained 41 %, 52 % and 60 % of rainfall over "
         "two years. Doubling depth from 50 to 100 mm gained more than the step from 100 to 150 mm.", 0.88),
        ("Extensive or intensive? Choosing a green roof type",
         "https://www.example.com/building/green-roof-types-explained",
         "Extensive roofs are shallow (60-200 mm), light and planted with sedums and grasses; they need little care. "
         "Intensive roofs are deeper (over 200 mm), carry shrubs or even trees and are designed as usable space; "
         "they hold much more water but need irrigation and regular gardening.", 0.84),
        ("Drainage layer design matters as much as soil depth",
         "https://journals.example.com/urban-water/drainage-layer-retention",
         "Retention boards with cups that hold 5-10 mm of water under the substrate raised annual retention by 6 to "
         "11 percentage points in a paired-roof study, at a cost well below that of deeper substrate.", 0.80),
        ("Green roof plant selection for dry summers",
         "https://gardens.example.org/guides/green-roof-plants-dry-summers",
         "Sedum mixes survive drought but transpire little once stressed; mixed grasses and herbs use more water "
         "and so free up more storage between storms, at the cost of some summer irrigation on shallow roofs.",
         0.62),
    ]),
    ("green roof peak flow reduction design storm performance", [
        ("Peak flow attenuation on vegetated roofs during intense storms",
         "https://journals.example.com/hydrology/peak-flow-green-roofs",
         "For storms under 25 mm, peak runoff rates were reduced by 60-90 % and delayed by 10 to 60 minutes. For the "
         "largest storms recorded (over 60 mm in 3 hours), the substrate saturated early and the peak reduction "
         "fell to 10-25 %.", 0.90),
        ("Can green roofs replace detention tanks? Modelling a city block",
         "https://www.example.org/stormwater/green-roofs-vs-detention-model",
         "Green roofs on every flat roof of a modelled block cut the 2-year peak flow at the outfall by 31 % but "
         "the 100-year peak by only 7 %. The authors conclude that roofs complement, but do not replace, "
         "detention for flood control.", 0.86),
        ("Design storms and green infrastructure credits",
         "https://engineering.example.net/notes/design-storms-green-infrastructure",
         "Most stormwater codes size for a design storm. Because green roofs perform best on the frequent small "
         "storms that cause combined sewer overflows, credits based only on a large design storm tend to "
         "undervalue them.", 0.74),
        ("Combined sewer overflows: where green roofs help most",
         "https://www.example.org/stormwater/cso-green-infrastructure",
         "In combined systems, overflows are triggered by storms of 10-20 mm in many cities. Capturing the first "
         "10 mm on roofs across a catchment reduced modelled overflow volume by 20-35 %.", 0.71),
    ]),
    ("green roof lifecycle cost analysis membrane lifespan", [
        ("Life-cycle cost of green roofs: a 40-year comparison",
         "https://journals.example.com/building-economics/green-roof-lcc",
         "Installed cost premiums over a conventional roof ranged from 90 to 220 per m² for extensive systems. "
         "Over 40 years, the premium was largely offset when the membrane was assumed to last twice as long under "
         "vegetation; without that assumption, net present cost remained 10-25 % higher.", 0.92),
        ("Does a green roof really double membrane life?",
         "https://roofing.example.com/articles/membrane-life-under-vegetation",
         "Vegetation shields the membrane from UV and from daily temperature swings of 40 °C or more. Long-term data "
         "remain thin: most claims of 40+ year membrane life come from a handful of old European roofs, and "
         "installation damage from the planting crew is a common cause of early leaks.", 0.85),
        ("Valuing co-benefits: energy, heat and biodiversity",
         "https://www.example.org/economics/green-roof-co-benefits",
         "When stormwater fee reductions, energy savings and avoided membrane replacement are counted, extensive "
         "green roofs reach a positive net present value in most scenarios studied; the result is sensitive to "
         "the local stormwater fee and the discount rate.", 0.79),
        ("Green roof costs explained for building owners",
         "https://www.example.com/building/green-roof-costs-owners-guide",
         "Typical cost components: root barrier, drainage and filter layers, growing medium, plants or pre-grown "
         "mats, edge details, and safety anchors for maintenance access. Structural upgrades can dominate the "
         "cost on older buildings.", 0.70),
    ]),
    ("green roof maintenance requirements cost per square meter extensive", [
        ("Maintaining extensive green roofs: a practical schedule",
         "https://gardens.example.org/guides/extensive-roof-maintenance",
         "Plan two to three visits a year once established, more during the first two growing seasons: remove "
         "tree seedlings and weeds, clear drains and gravel borders, top up bare patches and apply a slow-release "
         "fertiliser sparingly. Irrigation is only needed for establishment and extreme droughts.", 0.87),
        ("Why green roofs fail: lessons from 60 site inspections",
         "https://www.example.org/stormwater/green-roof-failure-inspections",
         "The most common problems were blocked drains (31 % of roofs), bare patches over 20 % of the area (24 %), "
         "and woody weeds rooting toward the membrane (18 %). Nearly all roofs with problems had no maintenance "
         "contract after the two-year warranty period.", 0.84),
        ("Maintenance costs of vegetated roofs in municipal buildings",
         "https://city.example.net/facilities/vegetated-roof-maintenance-costs",
         "Our facilities department spends on average 3 to 6 per m² per year on extensive roofs, with large "
         "roofs at the low end. Costs were higher in the first two years and for roofs without safe access.", 0.78),
    ]),
    ("green roof mandate city ordinance commercial buildings results", [
        ("Five years of a green roof bylaw: the city's own review",
         "https://city.example.net/planning/green-roof-bylaw-five-year-review",
         "Since the bylaw took effect, 410 roofs totalling 690,000 m² have been built or approved. The review "
         "finds good compliance at permit stage but weaker follow-up: a third of inspected roofs had coverage "
         "below the required 80 %.", 0.93),
        ("Green roof requirements around the world: a comparison",
         "https://www.example.org/policy/green-roof-requirements-comparison",
         "Requirements differ in trigger (roof area, building type or new construction only), minimum coverage "
         "(often 50-80 % of available roof) and alternatives (cash-in-lieu payments, solar panels or blue roofs). "
         "Several cities let owners combine vegetation and solar panels on the same roof.", 0.88),
        ("Developers' view on mandatory green roofs",
         "https://www.example.com/real-estate/developers-green-roof-mandate",
         "Interviews with 22 developers: cost was the main concern at first, but most said the requirement became "
         "routine within three years. Several asked for clearer maintenance rules and a single inspection at "
         "handover.", 0.76),
        ("Green roofs and solar panels: competing for the same roof?",
         "https://energy.example.net/articles/biosolar-roofs",
         "Combined 'biosolar' roofs keep vegetation under and between raised panels. Cooler air around the panels "
         "can slightly raise their output in hot weather, though the effect measured so far is small.", 0.69),
    ]),
    ("green roof runoff water quality phosphorus leaching", [
        ("Nutrient leaching from new green roofs",
         "https://journals.example.com/urban-water/nutrient-leaching-green-roofs",
         "Runoff from newly built roofs carried phosphorus concentrations several times higher than rainfall, "
         "mostly from compost in the growing medium. Concentrations fell over three to five years but remained "
         "above those from a conventional roof in several studies.", 0.89),
        ("Specifying low-nutrient growing media",
         "https://www.example.org/guidance/green-roof-growing-media-spec",
         "Limit organic content to 3-8 % by mass for extensive roofs, prefer mineral aggregates such as expanded "
         "shale or crushed brick, and avoid heavy fertilising after establishment. Media test certificates should "
         "report phosphorus content.", 0.82),
        ("Metals and roof runoff: do green roofs help?",
         "https://greenroof-lab.example.org/trials/metals-runoff",
         "The substrate captured much of the zinc and copper washed from flashings and gutters, but pH-raising "
         "aggregates changed the form in which some metals were released.", 0.66),
    ]),
    ("green roof structural load requirements retrofit saturated weight", [
        ("Structural loads for green roofs: what engineers check",
         "https://engineering.example.net/notes/green-roof-structural-loads",
         "Design for the saturated weight: typically 70-170 kg/m² for extensive systems and 300 kg/m² or more for "
         "intensive ones, plus snow and maintenance loads. Many existing steel-deck roofs cannot take even the "
         "lightest systems without strengthening.", 0.90),
        ("Retrofitting green roofs on existing buildings",
         "https://www.example.com/building/green-roof-retrofit-guide",
         "Start with a structural survey and a roof condition survey. A membrane with less than 15 years of "
         "remaining life should be replaced before the green roof goes on, since removing the build-up later "
         "is expensive.", 0.81),
        ("Lightweight green roof systems under 60 kg/m²",
         "https://roofing.example.com/articles/lightweight-green-roofs",
         "Thin sedum mats on water-retention fleece can weigh under 60 kg/m² saturated, but hold less water and "
         "need more care in drought; they suit retrofits where structure is the limit, not new builds.", 0.72),
    ]),
    ("green roof urban heat island cooling building energy savings", [
        ("Rooftop temperatures: vegetated versus dark roofs",
         "https://www.example.org/climate/rooftop-surface-temperatures",
         "On summer afternoons, vegetated roof surfaces were 20-30 °C cooler than dark membranes and close to the "
         "temperature of white reflective roofs. Air temperature effects at street level were small for "
         "individual roofs.", 0.85),
        ("Energy savings from green roofs depend on insulation",
         "https://energy.example.net/articles/green-roof-energy-insulation",
         "Savings in cooling energy were significant for the top floor of poorly insulated buildings but "
         "negligible for new buildings that already meet current insulation codes.", 0.80),
        ("Urban heat and green infrastructure: a city-scale model",
         "https://journals.example.com/urban-climate/city-scale-green-roofs",
         "Covering half of all flat roofs with vegetation lowered modelled afternoon air temperatures by 0.3-0.8 °C "
         "at pedestrian level, more in dense districts with many low flat roofs.", 0.74),
    ]),
    ("green roof vs blue roof vs permeable pavement stormwater cost effectiveness", [
        ("Comparing green infrastructure options per cubic metre retained",
         "https://www.example.org/stormwater/cost-per-cubic-metre",
         "Cost per cubic metre of annual runoff avoided was lowest for bioretention and street trees, mid-range for "
         "permeable pavement and highest for green roofs, whose cost is spread over a small footprint. Green "
         "roofs scored better when land values were high and no ground space was available.", 0.88),
        ("Blue roofs: detention without plants",
         "https://engineering.example.net/notes/blue-roofs",
         "A blue roof holds water on the roof behind flow restrictors and releases it slowly. It reduces peaks for "
         "larger storms more reliably than a green roof but does little for annual volume, since little water "
         "evaporates.", 0.83),
        ("Combining blue and green: detention layers under vegetation",
         "https://roofing.example.com/articles/blue-green-roofs",
         "Blue-green roofs add a controlled detention layer beneath the substrate, with outlets that can be "
         "managed remotely ahead of forecast storms. Pilot projects report both volume and peak benefits at a "
         "higher installed cost.", 0.78),
    ]),
]

GREEN_ROOF_REVIEW_PAGE = prose("""
    # Green roofs and stormwater: what a decade of measurements tells us

    *Stormwater Program, technical note 14. Updated after the 2023 monitoring season.*

    Green roofs have become one of the most visible tools of urban stormwater management. This note summarises
    what our monitoring network and the published literature say about how much rain they hold, how they
    affect peak flows and water quality, and what it takes to keep them performing. It is written for planners
    and engineers who need realistic numbers, not best cases.

    ## How a green roof handles rain

    A green roof is a layered system: a waterproof membrane with a root barrier, a drainage layer, a filter
    fabric, a growing medium and plants. Rain first wets the plants and the medium. Until the medium reaches
    field capacity, almost no water leaves the roof. Once it does, excess water drains through to the drainage
    layer and out through the roof drains, delayed and smoothed by its path through the layers. Between storms,
    evaporation from the medium and transpiration by the plants restore the storage.

    Two consequences follow. First, the roof's performance in any storm depends on how dry it was beforehand,
    so the same roof can retain all of one 20 mm storm and a third of the next. Second, annual retention is
    mostly a climate result: storage is restored quickly in warm, sunny weather and slowly in cool, cloudy
    weather, and not at all when the medium is frozen.

    ## Annual retention

    Our network includes fourteen extensive roofs with 80 to 150 mm of growing medium and three intensive roofs
    with 300 to 600 mm. Over ten years, the extensive roofs retained between 38 % and 64 % of annual rainfall,
    with a median of 51 %. The intensive roofs retained 66 % to 79 %. Results by season matter more than the
    annual figure:

    - In summer (June to August), extensive roofs retained 70 % to 90 % of rainfall.
    - In spring and early autumn they retained 40 % to 60 %.
    - From November to March, retention fell to 10 % to 25 %, and snowmelt events produced runoff volumes close to
    those of a conventional roof.

    Depth helps, with diminishing returns. On our experimental plots, going from 50 to 100 mm of medium added
    11 percentage points of annual retention; going from 100 to 150 mm added 8. Retention boards in the drainage
    layer, which hold a few millimetres of water under the medium, added 6 to 11 points at a fraction of the
    cost of extra depth.

    ## Peak flows

    For the frequent small storms that make up most of the rain in our climate, green roofs are very effective
    at reducing and delaying peaks. For storms under 25 mm, peak runoff rates from the extensive roofs were 60 %
    to 90 % lower than from the control roof and arrived 10 to 60 minutes later. For the largest storms in the
    record, the medium saturated early and the peak reduction fell to 10 % to 25 %. Green roofs therefore help
    most with combined sewer overflows, which in our system begin with storms of about 12 mm, and least with
    flood control for rare events, where detention remains necessary.

    ## Water quality

    Runoff from green roofs is cleaner than rainfall in some respects and dirtier in others. The medium captures
    much of the zinc and copper washed from metal flashings. New roofs, however, leach phosphorus and nitrogen
    from the compost in their medium. On our roofs, phosphorus concentrations in runoff were four to eight times
    those in rainfall during the first two years and fell to about twice rainfall levels after five years.
    Because the roofs also reduce runoff volume, the total load of phosphorus was similar to that of a
    conventional roof after the third year. Specifying a low-organic mineral medium (3 % to 8 % organic matter)
    and avoiding routine fertilising keeps leaching low from the start.

    ## Maintenance and performance over time

    Roofs that are maintained keep their performance. Of the fourteen extensive roofs, the eleven with a
    maintenance contract kept plant coverage above 80 % and showed no trend in retention over the decade. Two of
    the three roofs without one lost coverage to drought and weeds; on one, a blocked drain caused ponding and a
    leak at a parapet. Typical care is two to three visits a year: clearing drains and gravel borders, removing
    tree seedlings before their roots reach the membrane, repairing bare patches, and checking that the
    irrigation (where installed) works before summer.

    ## What this means for policy

    - Green roofs are a reliable way to reduce the volume and peak of frequent storms, and therefore overflows
    in combined sewer areas. They are not a substitute for detention designed for rare floods.
    - Credits should reflect seasonal performance: in cold climates, winter retention is low.
    - Depth beyond about 100 mm, and retention boards, raise performance at modest cost.
    - Performance depends on maintenance. Requirements that end at the building permit lose value within a few
    years; a maintenance plan and periodic inspection should be part of the approval.
    - Specify low-nutrient growing media to avoid trading less runoff for more phosphorus.

    ## Data

    Monthly retention figures for each monitored roof are available in the program's open data portal, together
    with the rain gauge records and the roof build-ups.
    """)

GREEN_ROOF_BYLAW_PAGE = prose("""
    # Green Roof Bylaw: Five-Year Review

    *City Planning Department, report to the Infrastructure Committee.*

    ## Summary

    The Green Roof Bylaw requires a green roof on new buildings with a gross floor area of 2,000 m² or more,
    covering between 20 % and 60 % of the available roof area depending on building size. Industrial buildings
    may pay a cash-in-lieu fee instead, or install cool roofing plus on-site stormwater retention. This review
    covers the first five years of the bylaw and recommends changes.

    ## What was built

    Since the bylaw took effect, 410 green roofs with a combined area of about 690,000 m² have been approved;
    330 are built and occupied. Residential towers account for 58 % of the area, commercial buildings for 27 %,
    and institutional buildings for the rest. The average roof carries 110 mm of growing medium and is planted
    with sedum mats, grasses and perennials. Forty-two roofs combine vegetation with solar panels.

    ## Stormwater results

    The city monitored runoff from twelve bylaw roofs and six conventional roofs for three years. The green
    roofs retained on average 48 % of annual rainfall (range 35 % to 61 %) and reduced peak runoff from storms
    under 25 mm by about two thirds. Across the whole stock, the roofs are estimated to retain about 260,000 m³ of
    rainwater a year, equivalent to roughly 2 % of the runoff reaching the combined sewer system in the
    downtown catchments.

    ## Costs

    Developers reported an installed cost premium of 100 to 200 per m² of green roof for extensive systems,
    or 0.5 % to 1.5 % of construction cost. Most of the spread comes from structural requirements and from
    access and safety provisions for maintenance. The cash-in-lieu fee, set at 200 per m², was used by 37
    industrial projects; the resulting fund has supported green roofs on 19 existing city buildings and
    schools.

    ## Compliance and maintenance

    Compliance at the permit stage is high. Follow-up is weaker: of 96 roofs inspected in the fifth year, 31 had
    plant coverage below the required 80 %, 14 had blocked drains or gravel strips overgrown with weeds, and 6 had
    visible woody plants. Roofs with problems were concentrated among buildings whose developer had handed over
    to an owners' association without a maintenance contract.

    ## Recommendations

    1. Require a maintenance plan with the building permit, and a maintenance agreement as a condition of
    occupancy.
    2. Inspect every roof in its third year and every five years after, with a fee that covers the cost.
    3. Raise the minimum depth of growing medium to 100 mm and allow retention boards as an alternative to
    extra depth.
    4. Adopt a growing-media specification that limits organic content and phosphorus.
    5. Update the cash-in-lieu fee to reflect current costs, and publish how the fund is spent.
    6. Allow combined green and solar roofs to count toward coverage where panels are raised at least 30 cm.

    ## Next steps

    Staff will bring draft amendments to the Committee next spring, after consultation with industry and
    residents' associations.
    """)


def tavily_output(query: str, results: list[tuple[str, str, str, float]], response_time: float) -> str:
    return json.dumps({
        "query": query, "follow_up_questions": None, "answer": None, "images": [],
        "results": [{"title": title, "url": url, "content": content, "score": score, "raw_content": None}
                    for title, url, content, score in results],
        "response_time": response_time,
    }, ensure_ascii=False)


GREEN_ROOF_SUMMARY = prose("""
    **Green roof requirement for new commercial buildings: evidence summary**

    **Stormwater volume.** Extensive green roofs (about 80-150 mm of growing medium) retain roughly 40-60 % of
    annual rainfall; intensive roofs 65-80 %. Performance is strongly seasonal: 70-90 % in summer, 10-25 % in
    winter, and close to nothing during snowmelt. A city's own monitoring of bylaw roofs found 48 % on average
    (range 35-61 %) [1][2][3].

    **Peak flows and overflows.** For storms under 25 mm, peaks drop 60-90 % and arrive 10-60 minutes later, which
    is what matters for combined sewer overflows. For rare, large storms the benefit falls to 10-25 %, so green
    roofs complement detention rather than replace it [1][4].

    **Cost.** Installed premium of about 90-220 per m² for extensive systems, or 0.5-1.5 % of construction cost.
    Over 40 years the premium is largely offset if the membrane lasts twice as long under vegetation, which is
    plausible but thinly documented [2][5]. Per cubic metre of runoff avoided, green roofs cost more than
    ground-level options such as bioretention, but they use no land [6].

    **Maintenance.** Two to three visits a year; about 3-6 per m² per year. The main risk is neglect after
    handover: in one city, a third of inspected roofs were below the required plant coverage after five years [2][7].

    **Downsides to manage.** Phosphorus leaching from compost-rich media in the first years (specify 3-8 % organic
    content); structural loads of 70-170 kg/m² saturated; competition with solar panels, which combined
    'biosolar' roofs resolve [1][8].

    **Suggested requirement design.** Trigger on roof area; minimum 100 mm of medium or retention boards; a
    maintenance plan at permit and inspection in year three; a growing-media specification; allow combined
    solar and green roofs; a cash-in-lieu option for roofs that cannot carry the load.

    Sources: [1] example.org stormwater technical note 14; [2] city.example.net bylaw five-year review;
    [3] journals.example.com retention review; [4] example.org detention model; [5] journals.example.com
    life-cycle cost study; [6] example.org cost per cubic metre; [7] gardens.example.org maintenance schedule;
    [8] journals.example.com nutrient leaching.
    """)


def research_agent() -> Json:
    conversation = Responses(303)
    conversation.user(
        "I'm preparing a briefing for our city council on a proposal to require green roofs on new commercial "
        "buildings with more than 2,000 m² of roof. What does the evidence say about stormwater retention, costs "
        "over the building's life, maintenance, and downsides? I need a one-page summary with sources.",
        typed=True)
    times = iter([1.84, 2.31, 1.52, 2.07, 1.66, 1.93, 1.71, 1.48, 2.12, 1.77, 1.95])
    review_url = "https://www.example.org/stormwater/green-roof-monitoring-decade"
    bylaw_url = "https://city.example.net/planning/green-roof-bylaw-five-year-review"
    paywalled = "https://journals.example.com/building-economics/green-roof-lcc"
    for number, (query, results) in enumerate(GREEN_ROOF_SEARCHES):
        conversation.step("tavily_search", {"query": query, "max_results": len(results), "search_depth": "advanced"},
                          tavily_output(query, results, next(times)))
        if number == 2:
            conversation.say("Retention and peak-flow figures are consistent across sources. Reading the most "
                             "detailed technical note in full before moving on to costs.")
            conversation.step("fetch_page", {"url": review_url}, GREEN_ROOF_REVIEW_PAGE)
        elif number == 3:
            conversation.step("fetch_page", {"url": paywalled},
                              "Error: HTTP 403 Forbidden. The page requires a subscription.")
        elif number == 5:
            conversation.step("fetch_page", {"url": bylaw_url}, GREEN_ROOF_BYLAW_PAGE)
    conversation.say(GREEN_ROOF_SUMMARY)
    conversation.user("Thanks, this is useful. Council members will ask about maintenance costs after the warranty "
                      "period. Is there any data on what extensive roofs cost to maintain after five or more years?")
    query = "extensive green roof maintenance cost after warranty period 5 years municipal data"
    more = [
        ("Municipal green roofs: ten-year maintenance ledger",
         "https://city.example.net/facilities/green-roof-ten-year-costs",
         "After the two-year establishment period, annual maintenance on our 23 extensive roofs averaged 2.8 per "
         "m², rising to 4.5 in years with drought repairs. Small roofs under 300 m² cost two to three times more "
         "per m² because of fixed access and travel costs.", 0.91),
        ("Owners' associations and green roof upkeep",
         "https://www.example.com/real-estate/green-roof-upkeep-associations",
         "A survey of 140 residential buildings found that a third had no budget line for roof vegetation. "
         "Buildings that set one up at handover spent on average 3-5 per m² per year.", 0.82),
        ("Warranty terms for green roof systems",
         "https://roofing.example.com/articles/green-roof-warranties",
         "System warranties commonly cover the membrane for 15-20 years but plants only through establishment "
         "(one or two growing seasons), and are void without documented maintenance visits.", 0.74),
    ]
    conversation.step("tavily_search", {"query": query, "max_results": 3, "search_depth": "advanced"},
                      tavily_output(query, more, 1.62))
    rules = {
        "tool_calls": BOOK_CALL_RULES,
        "tool_results": [*BOOK_RESULT_RULES,
                         {"tool": "fetch_page", "template": "Page {url} was fetched and read; the key points are in "
                                                            "the conversation. Fetch it again if needed."}],
    }
    request = {
        "model": "gpt-5-mini",
        "instructions": "You are a research assistant for city staff. Search widely before answering, prefer "
                        "monitoring data and reviews over opinion pieces, read the most relevant pages in full "
                        "with fetch_page, and cite every number with its source. Keep summaries to one page.",
        "input": conversation.items,
        "tools": responses_tools("tavily_search", "fetch_page"),
        "reasoning": {"effort": "low"},
        "store": False,
    }
    return preset(
        "Research agent (Responses API)",
        "A research agent on the OpenAI Responses API runs ten searches and fetches two long pages before writing "
        "a summary. Search results and fetched pages become one-line references; the failed fetch (HTTP 403) is "
        "kept because its reference would be longer, and the last search is kept because the model has not read "
        "it yet.",
        3, "gpt-5-mini", 6_000, 0, request, rules)


# =============================================================================================
# 4. A support/ops agent on the Anthropic Messages API: logs, SQL, docs, and two errors.

_PATHS = ["/api/cart", "/api/catalog/search", "/api/checkout/confirm", "/api/checkout/shipping-options",
          "/api/account/orders", "/api/catalog/product", "/api/cart/items"]


def api_log(seed: int = 404) -> str:
    """The tail of the shop API's log an hour into the incident: traffic, with pool timeouts at checkout."""
    rng = random.Random(seed)
    lines = []
    second = 15 * 3600 + 6 * 60 + 41.0
    tracebacks = 0
    while len(lines) < 118:
        second += rng.uniform(0.05, 0.9)
        stamp = f"2024-06-12T{second // 3600:02.0f}:{second % 3600 // 60:02.0f}:{second % 60:06.3f}Z"
        request_id = f"{rng.getrandbits(32):08x}"
        if rng.random() < 0.12:
            waiting = rng.randint(9, 31)
            lines.append(f"{stamp} ERROR shop.payments.client PoolTimeout: no connection to "
                         f"payments-gw.example.net:443 available after 3.00s (pool_size=4 in_use=4 "
                         f"waiting={waiting}) request_id={request_id}")
            if tracebacks < 2:
                tracebacks += 1
                lines += [
                    "Traceback (most recent call last):",
                    '  File "/srv/shop-api/shop/checkout/confirm.py", line 142, in confirm_order',
                    "    authorization = payments.authorize(order.payment_intent, amount=order.total)",
                    '  File "/srv/shop-api/shop/payments/client.py", line 97, in authorize',
                    '    response = self._http.post(self._url("/v2/authorizations"), json=body, '
                    "timeout=self._timeout)",
                    '  File "/srv/shop-api/.venv/lib/python3.12/site-packages/httpx/_client.py", line 1144, in post',
                    "    return self.request(",
                    '  File "/srv/shop-api/.venv/lib/python3.12/site-packages/httpx/_transports/default.py", line 232,'
                    " in handle_request",
                    "    with map_httpcore_exceptions():",
                    "httpx.PoolTimeout",
                ]
            lines.append(f"{stamp} WARN  shop.checkout.confirm payment authorization failed, showing "
                         f"PAYMENT_FAILED to customer order_id=ord_{rng.randint(5_100_000, 5_199_999)} "
                         f"request_id={request_id}")
            lines.append(f"{stamp} INFO  shop.api.request method=POST path=/api/checkout/confirm status=502 "
                         f"duration_ms={rng.randint(3004, 3090)} request_id={request_id}")
        else:
            path = rng.choice(_PATHS)
            method = "POST" if path in ("/api/cart/items", "/api/checkout/confirm") else "GET"
            status = 200 if rng.random() > 0.03 else rng.choice([304, 404, 422])
            duration = rng.randint(640, 1400) if path == "/api/checkout/confirm" else rng.randint(8, 190)
            lines.append(f"{stamp} INFO  shop.api.request method={method} path={path} status={status} "
                         f"duration_ms={duration} request_id={request_id}")
    return "\n".join(lines) + "\n"


def failed_payments_table() -> str:
    counts = [(13, 40, 3, 912), (13, 50, 2, 874), (14, 0, 19, 930), (14, 10, 61, 948), (14, 20, 118, 1011),
              (14, 30, 131, 1046), (14, 40, 127, 1002), (14, 50, 142, 1063), (15, 0, 139, 1079)]
    rows = [[f"2024-06-12 {hour:02d}:{minute:02d}:00+00", failed, total, f"{100 * failed / total:.1f}"]
            for hour, minute, failed, total in counts]
    return text_table(["bucket", "failed", "attempts", "failed_pct"], rows)


def error_codes_table() -> str:
    rows = [["pool_timeout", 712, "2024-06-12 14:05:09+00", "2024-06-12 15:07:44+00"],
            ["card_declined", 17, "2024-06-12 13:41:02+00", "2024-06-12 15:06:51+00"],
            ["insufficient_funds", 7, "2024-06-12 13:47:30+00", "2024-06-12 15:02:13+00"],
            ["3ds_abandoned", 4, "2024-06-12 13:44:18+00", "2024-06-12 15:05:37+00"],
            ["gateway_5xx", 2, "2024-06-12 14:31:50+00", "2024-06-12 14:31:52+00"]]
    return text_table(["error_code", "attempts", "first_seen", "last_seen"], rows)


_BASKETS = [19.9, 34.5, 48.0, 62.75, 89.0, 120.4, 15.25, 27.6, 54.3, 71.1, 38.95, 142.0, 23.45]


def charged_without_order_table(seed: int = 405) -> str:
    rng = random.Random(seed)
    rows = []
    for _ in range(9):
        minute = rng.randint(6, 66)
        rows.append([f"ord_{rng.randint(5_100_000, 5_199_999)}", f"pi_{rng.getrandbits(48):012x}",
                     f"{rng.choice(_BASKETS):.2f}",
                     f"2024-06-12 {14 + minute // 60:02d}:{minute % 60:02d}:{rng.randint(0, 59):02d}+00",
                     "authorized", "payment_failed"])
    rows.sort(key=lambda row: row[3])
    return text_table(["order_id", "payment_intent", "amount_eur", "attempted_at", "provider_status",
                       "order_status"], rows)


PAYMENTS_CONFIG = dedent("""
    # Payments gateway client. Managed by the shop-api deploy; local edits are overwritten.
    payments:
      gateway_url: https://payments-gw.example.net
      api_version: v2
      credentials_ref: vault://shop/payments-gw/api-key
      http:
        # One client per process since 2.14.0 (PR #3121); before, one per request.
        shared_client: true
        pool_size: 4
        pool_timeout_s: 3.0
        connect_timeout_s: 2.0
        read_timeout_s: 10.0
        keepalive_expiry_s: 30
      retries:
        authorize: 0          # never retry an authorization automatically
        capture: 3
        refund: 3
      webhooks:
        path: /hooks/payments
        signing_secret_ref: vault://shop/payments-gw/webhook-secret
    """)

GUNICORN_CONF = dedent("""
    # shop-api process model
    bind = "0.0.0.0:8000"
    workers = 6
    worker_class = "gthread"
    threads = 16
    timeout = 30
    graceful_timeout = 20
    max_requests = 5000
    max_requests_jitter = 500
    """)

RUNBOOK_HITS = dedent("""
    3 results in runbooks

    [1] Payments: checkout shows PAYMENT_FAILED (runbooks/payments/payment-failed.md, updated 2024-03-02)
    ...If the API log shows PoolTimeout or ConnectTimeout from shop.payments.client, the problem is on our side of
    the connection, not at the gateway: check the gateway status page first, then the pool settings in
    payments.yaml. Every gunicorn thread that handles a checkout needs a connection for the length of the
    authorization call (p95 about 900 ms). Rule of thumb: pool_size >= threads per worker...
    ...Do NOT retry authorizations by hand. An authorization that timed out on our side may still have succeeded
    at the gateway; reconcile with the payment_intents table before contacting customers (see "Charged but no
    order")...

    [2] Charged but no order (runbooks/payments/charged-no-order.md, updated 2023-11-20)
    ...Find payment intents that the gateway reports as authorized while the order is payment_failed. Authorized
    amounts are released automatically after 7 days, but customers see a pending charge. Void them in bulk with
    `shopctl payments void --intent-file` after approval from the payments lead...

    [3] Rolling back shop-api (runbooks/deploy/rollback.md, updated 2024-05-14)
    ...`shopctl deploy rollback shop-api --to <version>` redeploys the previous image and config in about 4
    minutes with no downtime. Config in config.d/ is versioned with the image, so a rollback also restores the
    previous payments.yaml...
    """)

CHANGELOG_2_14 = dedent("""
    shop-api 2.14.0 (2024-06-12), upgrading from 2.13.2: no database migrations

    Features
    - checkout: show estimated delivery dates from the carrier API on the confirm page (#3098)
    - catalog: faster faceted search using the new product_facets materialized view (#3104)
    - account: customers can download invoices as PDF (#3110)

    Changes
    - payments: share one HTTP client per process instead of creating one per request; removes the TLS
      handshake from every authorization, saving about 120 ms at p50 (#3121)
    - payments: pool settings moved to config.d/payments.yaml (pool_size default 4) (#3121)
    - deps: httpx 0.27.0, pydantic 2.7.3, sqlalchemy 2.0.30

    Fixes
    - cart: quantity field accepted negative numbers through the API (#3115)
    - checkout: coupon codes were case-sensitive (#3117)
    """)


def anthropic_support() -> Json:
    chat = Anthropic(404)
    chat.user("Ticket #48213, plus about 40 similar ones since lunch: customers get \"Payment could not be "
              "processed\" at checkout. It started around 14:05 UTC, shortly after the 13:50 deploy of shop-api "
              "2.14.0. Please find out what's going on. Don't change anything in production, just tell me what "
              "you find and what you'd do.")
    log_id, sql_id = chat.turn(
        "I'll look at the API log around the deploy and at the failure rate over time, in parallel.",
        ("read_file", {"path": "/var/log/shop/api.log", "tail": 160}),
        ("run_sql", {"query": "SELECT date_bin('10 minutes', created_at, '2024-06-12') AS bucket,\n"
                              "       count(*) FILTER (WHERE status = 'failed') AS failed,\n"
                              "       count(*) AS attempts,\n"
                              "       round(100.0 * count(*) FILTER (WHERE status = 'failed') / count(*), 1) "
                              "AS failed_pct\n"
                              "FROM payment_attempts\n"
                              "WHERE created_at >= '2024-06-12 13:40+00'\n"
                              "GROUP BY 1 ORDER BY 1;"}))
    log = api_log()
    waiting = max(int(number) for number in re.findall(r"waiting=(\d+)", log))
    chat.results(tool_result(log_id, log), tool_result(sql_id, failed_payments_table()))
    (old_log,) = chat.turn("Failures go from under 0.5 % before 14:00 to 12-13 % from 14:20, and the log shows "
                           "PoolTimeout from our payments client: all 4 connections in use, with up to "
                           f"{waiting} requests waiting. Let me compare with yesterday's log at the same time.",
                           ("read_file", {"path": "/var/log/shop/api.log.1", "tail": 160}))
    chat.results(tool_result(old_log, "read_file: /var/log/shop/api.log.1: No such file or directory", error=True))
    config_id, gunicorn_id = chat.turn(
        "No rotated log under that name. I'll check the payments client configuration and the process model "
        "instead, since a pool of 4 seems small.",
        ("read_file", {"path": "/etc/shop/api/config.d/payments.yaml"}),
        ("read_file", {"path": "/etc/shop/api/gunicorn.conf.py"}))
    chat.results(tool_result(config_id, [PAYMENTS_CONFIG]), tool_result(gunicorn_id, [GUNICORN_CONF]))
    (docs_id,) = chat.turn("That explains it: each of the 6 workers runs 16 threads, but since 2.14.0 they share "
                           "one client with a pool of 4 connections per process. Checking the runbooks for "
                           "guidance.",
                           ("search_docs", {"query": "PoolTimeout payments client pool size", "space": "runbooks"}))
    chat.results(tool_result(docs_id, "search_docs failed: HTTP 500 Internal Server Error from "
                                      "wiki-search.internal (request id 3e1f9c0a). Try again later.", error=True))
    (docs_retry,) = chat.turn(None, ("search_docs", {"query": "PoolTimeout payments pool_size", "space": "runbooks"}))
    chat.results(tool_result(docs_retry, RUNBOOK_HITS))
    codes_id, changelog_id = chat.turn(
        "The runbook confirms the rule pool_size >= threads per worker. Let me make sure the failures are all pool "
        "timeouts, and read the release notes for 2.14.0.",
        ("run_sql", {"query": "SELECT error_code, count(*) AS attempts, min(created_at) AS first_seen, "
                              "max(created_at) AS last_seen\nFROM payment_attempts\nWHERE created_at >= "
                              "'2024-06-12 13:40+00' AND status = 'failed'\nGROUP BY 1 ORDER BY 2 DESC;"}),
        ("read_file", {"path": "/srv/shop-api/CHANGELOG-2.14.0.txt"}))
    chat.results(tool_result(codes_id, error_codes_table()), tool_result(changelog_id, CHANGELOG_2_14))
    chat.messages.append({"role": "assistant", "content": [{"type": "text", "text": prose("""
        Here is what I found.

        **Cause.** shop-api 2.14.0 (PR #3121) made the payments client shared per process, with `pool_size: 4`.
        Each process runs 16 threads (`gthread`, 6 workers), so under afternoon load up to 16 checkouts compete
        for 4 connections. Requests that wait more than `pool_timeout_s: 3.0` fail with `PoolTimeout`, and the
        customer sees PAYMENT_FAILED. 712 of the 742 failed attempts since 13:40 are `pool_timeout`, all after
        14:05; the other codes are at their usual levels.

        **What I'd do.**
        1. Roll back to 2.13.2 (`shopctl deploy rollback shop-api --to 2.13.2`), which also restores the old
        payments config. About 4 minutes, no downtime.
        2. Then fix forward: set `pool_size` to at least the thread count (16, or 20 for headroom) and add a
        test or startup check that enforces `pool_size >= threads`.
        3. Before contacting customers, check for authorizations that succeeded at the gateway while the order
        failed: the runbook warns that a timeout on our side does not mean the gateway declined.

        I have not changed anything.
        """)}]})
    chat.user("Agreed, I'll ask for the rollback. Can you run that check for customers who were charged without "
              "getting an order?")
    (check_id,) = chat.turn(
        "Running the reconciliation query from the 'Charged but no order' runbook for today's window.",
        ("run_sql", {"query": "SELECT o.id AS order_id, pi.id AS payment_intent, pi.amount AS amount_eur,\n"
                              "       pa.created_at AS attempted_at, pi.provider_status, o.status AS order_status\n"
                              "FROM orders o\nJOIN payment_intents pi ON pi.order_id = o.id\n"
                              "JOIN payment_attempts pa ON pa.payment_intent_id = pi.id\n"
                              "WHERE pa.created_at >= '2024-06-12 14:00+00'\n"
                              "  AND o.status = 'payment_failed' AND pi.provider_status = 'authorized'\n"
                              "ORDER BY pa.created_at;"}))
    chat.results(tool_result(check_id, charged_without_order_table()))
    rules = {"tool_calls": [], "tool_results": [
        {"tool": "read_file", "template": "File content from {file_path}. Re-read if needed."},
        {"tool": "run_sql", "template": "Query result omitted ({lines} lines). Re-run if needed: {query}"},
        {"tool": "search_docs", "template": "Docs search results processed. Query: {query}. Search again if "
                                            "needed."},
    ]}
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "You are the on-call assistant for the Larkspur Goods web shop. You can read logs and config "
                  "files on the production hosts, run read-only SQL on the reporting replica, and search the "
                  "internal docs. Never change production systems; propose actions and say how risky they are. "
                  "Quote numbers from query results, and say when you are guessing.",
        "tools": anthropic_tools("read_log", "run_sql", "search_docs"),
        "messages": chat.messages,
    }
    return preset(
        "Support agent (Anthropic Messages)",
        "An on-call agent on the Anthropic Messages API reads logs, config files and runbooks and queries the "
        "database. Two results are errors (a missing log file and an HTTP 500 from the docs search): they stay "
        "as they are, because a reference would hide the failure. The last query result is kept because the "
        "model has not seen it yet.",
        4, "claude-sonnet-4-5", 6_000, 0, request, rules)


# =============================================================================================
# 5. A long multi-turn session: a blog moves from Jekyll to Hugo, 32 tool uses over five requests.

BLOG_LS = dedent("""
    404.html
    CNAME
    Gemfile
    Gemfile.lock
    README.md
    _config.yml
    _data
    _drafts
    _includes
    _layouts
    _posts
    _sass
    about.md
    assets
    feed.xml
    index.html
    tags.html
    """)

JEKYLL_CONFIG = dedent("""
    title: Dirt & Data
    description: >-
      Notes on bikes, trails and the numbers they produce. Written by Maya Lindqvist.
    author:
      name: Maya Lindqvist
      email: maya@example.com
    url: "https://dirtanddata.example.com"
    baseurl: ""
    permalink: /blog/:year/:month/:day/:title.html
    timezone: Europe/Stockholm
    lang: en

    markdown: kramdown
    kramdown:
      input: GFM
      syntax_highlighter: rouge
      syntax_highlighter_opts:
        line_numbers: false

    plugins:
      - jekyll-feed
      - jekyll-seo-tag
      - jekyll-sitemap
      - jekyll-paginate

    paginate: 10
    paginate_path: /blog/page:num/

    defaults:
      - scope:
          path: ""
          type: posts
        values:
          layout: post
          comments: false
          show_toc: false

    exclude:
      - Gemfile
      - Gemfile.lock
      - README.md
      - vendor/
      - tools/
    """)

BLOG_POSTS = [
    "2018-11-05-first-post", "2018-11-19-why-i-log-every-ride", "2018-12-02-winter-tyres-for-gravel",
    "2019-01-13-a-cheap-indoor-trainer-setup", "2019-02-24-heart-rate-zones-explained-badly",
    "2019-04-02-parsing-gps-tracks-with-python", "2019-04-28-elevation-data-is-noisy",
    "2019-05-19-smoothing-elevation-with-a-kalman-filter", "2019-06-30-midsummer-gravel-loop",
    "2019-08-11-bikepacking-kit-list", "2019-09-22-tubeless-setup-without-tears",
    "2019-10-27-plotting-a-year-of-rides", "2019-12-08-winter-commuting-lights",
    "2020-02-09-a-year-of-commuting-by-bike", "2020-03-29-maps-with-folium",
    "2020-05-10-building-a-ride-database-in-sqlite", "2020-06-21-rebuilding-a-trail-bike",
    "2020-08-16-chain-wear-and-how-to-measure-it", "2020-10-04-autumn-in-the-forest-trails",
    "2020-11-22-power-meters-on-a-budget",
]

LIQUID_TAGS = dedent("""
        212 {% highlight
        212 {% endhighlight
         71 {% include figure.html
         19 {% post_url
          9 {% include callout.html
          4 {% raw
          4 {% endraw
          2 {% include youtube.html
    """)

GPS_POST = dedent("""
    ---
    title: "Parsing GPS tracks with Python"
    date: 2019-04-02 19:40:00 +0200
    tags: [python, gps, data]
    description: Reading GPX files from my bike computer into pandas, and the three surprises on the way.
    image: /assets/img/2019/gpx-map-thumb.jpg
    ---

    My bike computer writes a GPX file for every ride: an XML file with one `<trkpt>` element per second, each
    with latitude, longitude, elevation and a timestamp, plus heart rate and cadence in an extensions block.
    After six months I had 140 of them and wanted them in one table.

    {% include figure.html src="/assets/img/2019/gpx-raw.png" caption="One second of a ride in GPX." %}

    ## Reading a file

    The standard library is enough. The only trick is the namespaces: every element name carries one, and the
    heart-rate extension uses a second.

    {% highlight python %}
    import xml.etree.ElementTree as ET

    NS = {"gpx": "http://www.topografix.com/GPX/1/1",
          "tpx": "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"}

    def read_points(path):
        root = ET.parse(path).getroot()
        for point in root.iterfind(".//gpx:trkpt", NS):
            hr = point.find(".//tpx:hr", NS)
            yield {
                "lat": float(point.get("lat")),
                "lon": float(point.get("lon")),
                "ele": float(point.findtext("gpx:ele", namespaces=NS)),
                "time": point.findtext("gpx:time", namespaces=NS),
                "hr": int(hr.text) if hr is not None else None,
            }
    {% endhighlight %}

    ## Surprise one: pauses

    When I stop at a traffic light the computer stops recording, so the timestamps jump. Summing the
    time between points gives moving time; the difference between first and last timestamp gives elapsed
    time. Both are useful, and it is easy to mix them up when computing an average speed.

    {% include callout.html type="note" text="Auto-pause differs by device: mine pauses below 3 km/h." %}

    ## Surprise two: distance

    The distance between two points on a sphere needs the haversine formula, not Pythagoras on degrees. At
    our latitude a degree of longitude is only about 55 km, so the naive version overstates east-west distance
    by almost a factor of two.

    {% highlight python %}
    from math import asin, cos, radians, sin, sqrt

    def haversine(lat1, lon1, lat2, lon2, radius=6_371_000):
        dlat, dlon = radians(lat2 - lat1), radians(lon2 - lon1)
        a = sin(dlat / 2) ** 2 + cos(radians(lat1)) * cos(radians(lat2)) * sin(dlon / 2) ** 2
        return 2 * radius * asin(sqrt(a))
    {% endhighlight %}

    ## Surprise three: elevation

    Summing every positive change in elevation gave 40 % more climbing than the bike computer reported. GPS
    elevation is noisy, and every wobble counts as a climb. I wrote more about that in
    [a follow-up post]({% post_url 2019-04-28-elevation-data-is-noisy %}).

    {% include figure.html src="/assets/img/2019/elevation-noise.png" caption="GPS (grey) vs barometer (black)." %}

    Next time: putting all 140 rides into one DataFrame and plotting where I actually ride.
    """)

FIRST_POST = dedent("""
    ---
    layout: post
    title: First post (again)
    date: Mon, 05 Nov 2018 21:14:00 +0100
    categories: meta
    wordpress_id: 12
    ---

    This blog used to live on WordPress. I moved it to Jekyll over a rainy weekend because I wanted to write
    in Markdown, keep everything in git, and stop updating plugins. The old posts are gone: they were mostly
    about a job I no longer have. From now on it's bikes, trails and the data they produce.
    """)

CONVERTER_V1 = '''#!/usr/bin/env python3
"""Convert Jekyll posts (_posts/YYYY-MM-DD-slug.md) into Hugo content files.

Front matter keeps title, tags, categories, description and image; the date comes from the
`date:` key or the file name, and `slug` is set so that hugo.toml's permalink rule can rebuild
the old URL. In the body, the Liquid tags this blog uses become Markdown or Hugo shortcodes:
{% highlight %} -> fenced code, {% include figure.html %} -> {{< figure >}},
{% include callout.html %} -> {{< callout >}}, {% post_url %} -> {{< ref >}}, {% raw %} removed.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from pathlib import Path

import yaml

NAME = re.compile(r"(?P<date>\\d{4}-\\d{2}-\\d{2})-(?P<slug>.+)\\.(?:md|markdown)$")
HIGHLIGHT = re.compile(r"\\{%\\s*highlight\\s+(\\w+)(?:\\s+linenos)?\\s*%\\}\\n?"
                       r"(.*?)\\{%\\s*endhighlight\\s*%\\}", re.S)
INCLUDE = re.compile(r"\\{%\\s*include\\s+(figure|callout)\\.html\\s+(.*?)%\\}")
POST_URL = re.compile(r"\\{%\\s*post_url\\s+(\\S+)\\s*%\\}")
RAW = re.compile(r"\\{%\\s*(?:end)?raw\\s*%\\}")
LEFTOVER = re.compile(r"\\{%.*?%\\}")
ATTR = re.compile(r'(\\w+)="([^"]*)"')
KEEP = ("title", "tags", "categories", "description", "image")


def split_front_matter(text: str) -> tuple[dict, str]:
    if not text.startswith("---\\n"):
        return {}, text
    end = text.index("\\n---\\n", 4)
    return yaml.safe_load(text[4:end]) or {}, text[end + 5:]


def shortcode(name: str, attributes: str) -> str:
    pairs = " ".join(f'{key}="{value}"' for key, value in ATTR.findall(attributes))
    return "{{< " + name + " " + pairs + " >}}"


def convert_body(body: str) -> str:
    body = HIGHLIGHT.sub(lambda m: f"```{m.group(1)}\\n{m.group(2).rstrip()}\\n```", body)
    body = INCLUDE.sub(lambda m: shortcode(m.group(1), m.group(2)), body)
    body = POST_URL.sub(lambda m: '{{< ref "posts/' + m.group(1) + '.md" >}}', body)
    return RAW.sub("", body)


def published(meta: dict, file_date: str) -> str:
    value = meta.get("date") or file_date
    return datetime.fromisoformat(str(value)).isoformat()


def convert(path: Path, dest: Path, dry_run: bool) -> list[str]:
    """Write one post; return warnings about Liquid left in the body."""
    match = NAME.match(path.name)
    if not match:
        return [f"{path.name}: not a post file name, skipped"]
    meta, body = split_front_matter(path.read_text(encoding="utf-8"))
    front = {key: meta[key] for key in KEEP if key in meta}
    front["date"] = published(meta, match["date"])
    front["slug"] = match["slug"]
    if meta.get("published") is False:
        front["draft"] = True
    body = convert_body(body)
    warnings = [f"{path.name}: leftover Liquid {tag}" for tag in LEFTOVER.findall(body)]
    if not dry_run:
        target = dest / (path.stem + ".md")
        text = "---\\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\\n" + body
        target.write_text(text, encoding="utf-8")
    return warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path("_posts"))
    parser.add_argument("--dest", type=Path, default=Path("hugo/content/posts"))
    parser.add_argument("--dry-run", action="store_true", help="convert but write nothing")
    args = parser.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    posts = sorted(args.src.glob("*.md")) + sorted(args.src.glob("*.markdown"))
    warnings: list[str] = []
    for path in posts:
        warnings += convert(path, args.dest, args.dry_run)
    for warning in warnings:
        print("warning:", warning, file=sys.stderr)
    print(f"{'would write' if args.dry_run else 'wrote'} {len(posts)} posts, {len(warnings)} warnings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

CONVERTER_V2 = CONVERTER_V1.replace(
    "import argparse\nimport re\n", "import argparse\nimport email.utils\nimport re\n").replace(
    '''    value = meta.get("date") or file_date
    return datetime.fromisoformat(str(value)).isoformat()''',
    '''    """ISO 8601 from what Jekyll accepted: a YAML date, ISO text, or an RFC 2822 date left over from the
    WordPress import ("Mon, 05 Nov 2018 21:14:00 +0100")."""
    value = str(meta.get("date") or file_date)
    try:
        return datetime.fromisoformat(value).isoformat()
    except ValueError:
        return email.utils.parsedate_to_datetime(value).isoformat()''')

YOUTUBE_WARNINGS = "".join(
    f'warning: {post}.md: leftover Liquid {{% include youtube.html id="{video}" %}}\n'
    for post, video in [("2019-08-11-bikepacking-kit-list", "Xq3T9pLwz0c"),
                        ("2021-07-04-riding-the-inland-trail", "m4KfR2s8b1E")])


def converter_traceback() -> str:
    def at(needle: str, function: str) -> str:
        return f'  File "/home/maya/blog/tools/jekyll_to_hugo.py", line {_line_of(CONVERTER_V1, needle)}, in {function}'

    return "\n".join([
        "Traceback (most recent call last):",
        at("    sys.exit(main())", "<module>"),
        "    sys.exit(main())",
        "             ^^^^^^",
        at("warnings += convert(path", "main"),
        "    warnings += convert(path, args.dest, args.dry_run)",
        "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        at('front["date"] = published(', "convert"),
        '    front["date"] = published(meta, match["date"])',
        "                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        at("datetime.fromisoformat(str(value))", "published"),
        "    return datetime.fromisoformat(str(value)).isoformat()",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "ValueError: Invalid isoformat string: 'Mon, 05 Nov 2018 21:14:00 +0100'",
        "[exit code 1]",
    ]) + "\n"


def line_count(text: str) -> int:
    return len(text.splitlines())


def hugo_post(jekyll: str, slug: str) -> str:
    """What tools/jekyll_to_hugo.py makes of a post (for the few lines the agent looks at)."""
    _, header, body = jekyll.split("---\n", 2)
    meta = dict(line.split(": ", 1) for line in header.splitlines() if ": " in line)
    tags = meta["tags"].strip("[]").split(", ")
    when = meta["date"]
    iso = f"{when[:10]}T{when[11:19]}{when[20:23]}:{when[23:25]}"
    description = meta["description"]
    cut = description.rfind(" ", 0, 80 - len("description: "))
    front = (["---", f"title: {meta['title'].strip(chr(34))}", "tags:", *[f"- {tag}" for tag in tags],
              f"description: {description[:cut]}", f"  {description[cut + 1:]}", f"image: {meta['image']}",
              f"date: '{iso}'", f"slug: {slug}", "---"])
    body = re.sub(r"\{% highlight (\w+) %\}\n(.*?)\{% endhighlight %\}", lambda m: f"```{m[1]}\n{m[2]}```", body,
                  flags=re.S)
    body = re.sub(r"\{% include (figure|callout)\.html (.*?) ?%\}", r"{{< \1 \2 >}}", body)
    body = re.sub(r"\{% post_url (\S+) %\}", r'{{< ref "posts/\1.md" >}}', body)
    return "\n".join(front) + "\n" + body


def figure_lines(post: str, name: str) -> list[str]:
    """grep -n's view of the figure shortcodes in a converted post."""
    return [f"hugo/content/posts/{name}.md:{number}:{line}" for number, line in enumerate(post.split("\n"), 1)
            if "/assets/img/" in line and "{{< figure" in line]


CALLOUT_INCLUDE = dedent("""
    <aside class="callout callout-{{ include.type | default: 'note' }}" role="note">
      <strong class="callout-label">{{ include.type | default: 'note' | capitalize }}</strong>
      <p>{{ include.text | markdownify | remove: '<p>' | remove: '</p>' }}</p>
    </aside>
    """)


HUGO_CONFIG = dedent("""
    baseURL = "https://dirtanddata.example.com/"
    languageCode = "en"
    title = "Dirt & Data"
    timeZone = "Europe/Stockholm"
    enableRobotsTXT = true

    [params]
      description = "Notes on bikes, trails and the numbers they produce."
      author = "Maya Lindqvist"

    [pagination]
      pagerSize = 10
      path = "page"

    [permalinks]
      # Same URLs as Jekyll (/blog/:year/:month/:day/:title.html), without the .html: old links
      # get aliases, added by tools/add_aliases.py.
      posts = "/blog/:year/:month/:day/:slug/"

    [taxonomies]
      tag = "tags"
      category = "categories"

    [markup]
      [markup.highlight]
        style = "monokai"
        lineNos = false
        noClasses = false
      [markup.goldmark.renderer]
        unsafe = true    # a few old posts embed raw HTML tables

    [outputs]
      home = ["HTML", "RSS"]
      section = ["HTML"]

    [services.rss]
      limit = 20
    """)

CALLOUT_SHORTCODE = dedent("""
    {{- /* Callout box, replacing _includes/callout.html. Usage: {{< callout type="note" text="…" >}} */ -}}
    {{- $type := .Get "type" | default "note" -}}
    <aside class="callout callout-{{ $type }}" role="note">
      <strong class="callout-label">{{ title $type }}</strong>
      <p>{{ .Get "text" | markdownify }}</p>
    </aside>
    """)

MOVE_IMAGES = '''#!/usr/bin/env python3
"""Turn posts that use images into page bundles, so image paths are relative to the post.

For each hugo/content/posts/NAME.md that references /assets/img/...: create the folder
hugo/content/posts/NAME/, move the post to NAME/index.md, copy each referenced image next to it
and rewrite the reference to the bare file name. Images nobody references are listed at the end.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

POSTS = Path("hugo/content/posts")
ASSETS = Path("assets/img")
REFERENCE = re.compile(r"/assets/img/([\\w./-]+\\.(?:png|jpe?g|gif|webp|svg))")


def bundle(post: Path) -> int:
    text = post.read_text(encoding="utf-8")
    images = sorted(set(REFERENCE.findall(text)))
    if not images:
        return 0
    folder = post.with_suffix("")
    folder.mkdir(exist_ok=True)
    for image in images:
        source = ASSETS / image
        if not source.exists():
            print(f"missing: {source} (in {post.name})", file=sys.stderr)
            continue
        shutil.copy2(source, folder / source.name)
        text = text.replace(f"/assets/img/{image}", source.name)
    (folder / "index.md").write_text(text, encoding="utf-8")
    post.unlink()
    return len(images)


def main() -> int:
    used = 0
    bundles = 0
    for post in sorted(POSTS.glob("*.md")):
        count = bundle(post)
        used += count
        bundles += count > 0
    all_images = [p for p in ASSETS.rglob("*") if p.is_file()]
    print(f"{bundles} posts bundled, {used} images referenced, {len(all_images) - used} images unused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

ADD_ALIASES = '''#!/usr/bin/env python3
"""Give every post an alias at its old Jekyll URL (/blog/YYYY/MM/DD/slug.html), so old links redirect."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import yaml

POSTS = Path("hugo/content/posts")


def old_url(front: dict) -> str:
    day = datetime.fromisoformat(front["date"])
    return f"/blog/{day:%Y/%m/%d}/{front['slug']}.html"


def main() -> int:
    changed = 0
    for path in sorted(POSTS.glob("**/*.md")):
        if path.name == "_index.md":
            continue
        text = path.read_text(encoding="utf-8")
        _, header, body = text.split("---\\n", 2)
        front = yaml.safe_load(header)
        alias = old_url(front)
        if alias in front.get("aliases", []):
            continue
        front.setdefault("aliases", []).append(alias)
        path.write_text("---\\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\\n" + body,
                        encoding="utf-8")
        changed += 1
    print(f"added aliases to {changed} posts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

HUGO_HEADER = ("Start building sites … \nhugo v0.128.2-de36c1a95d28595d8243fd8b891665b069ed0850+extended "
               "linux/amd64 BuildDate=2024-07-04T08:13:25Z VendorInfo=gohugoio\n\n")


def hugo_stats(pages: int, bundled: int, aliases: int, millis: int) -> str:
    table = dedent(f"""
                           | EN
        -------------------+------
          Pages            | {pages:>4}
          Paginator pages  | {7:>4}
          Non-page files   | {bundled:>4}
          Static files     | {0:>4}
          Processed images | {0:>4}
          Aliases          | {aliases:>4}
          Cleaned          | {0:>4}
        """)
    return HUGO_HEADER + table + f"\n\nTotal in {millis} ms\n"


BIKE_POST_HUGO = dedent("""
    ---
    title: Rebuilding a trail bike from the frame up
    tags:
    - maintenance
    - mtb
    description: A 2012 hardtail, a box of parts and three weekends. What I'd do differently.
    image: /assets/img/2020/hardtail-after.jpg
    date: '2020-06-21T10:05:00+02:00'
    slug: rebuilding-a-trail-bike
    ---

    The frame cost less than a new tyre: a 2012 aluminium hardtail with a dented top tube guard and nothing else
    wrong with it. Everything else came from the parts bin and a few careful purchases.

    {{< figure src="/assets/img/2020/hardtail-before.jpg" caption="Day one: a bare frame and a box of parts." >}}

    ## Standards, standards

    The first weekend went on measuring. A bike from 2012 sits right at the change from quick-release to
    thru-axles, from straight to tapered head tubes, and from 26 to 27.5 inch wheels. This one has a tapered head
    tube (good: modern forks fit), a 142 mm rear thru-axle (fine) and room for 27.5 x 2.35 tyres (just).

    ```text
    head tube      tapered, ZS44 top / EC49 bottom
    bottom bracket BSA threaded, 73 mm
    rear axle      142 x 12 mm thru-axle
    seatpost       30.9 mm
    brake mount    IS on the frame, adapter to post mount
    ```

    {{< callout type="tip" text="Measure the seatpost with calipers: 30.9 and 31.6 mm look alike." >}}

    ## The drivetrain

    I went 1x11 with a narrow-wide chainring and a clutch derailleur, which removed the front derailleur, its cable
    and its mount. The chainline needed a 3 mm spacer on the drive side. Measured chain wear on the old chain was
    0.75 %, so it went in the bin, as did the cassette it had been wearing in. See the
    [chain wear post]({{< ref "posts/2020-08-16-chain-wear-and-how-to-measure-it.md" >}}) for how I measure it.

    {{< figure src="/assets/img/2020/drivetrain-1x11.jpg" caption="1x11 with a 30T ring: enough for our hills." >}}

    ## Brakes

    Bleeding hydraulic brakes is easier than its reputation, as long as you follow the order in the manual and
    keep mineral oil and DOT fluid far apart. Both brakes needed new pads after sitting unused: the old ones had
    glazed.

    ## What I'd do differently

    - Buy the headset after the fork, not before. I bought the wrong lower cup.
    - Cut the steerer once, long, and take spacers out over a few rides.
    - Weigh the parts bin honestly: the old wheels added 400 g over a budget set.

    {{< figure src="/assets/img/2020/hardtail-after.jpg" caption="Three weekends later." >}}
    """)


def long_session() -> Json:
    chat = Chat(505, "You are a coding assistant working in the user's blog repository at /home/maya/blog. You can "
                     "run shell commands, read and create files, and search the web. Prefer small scripts over "
                     "manual edits, explain briefly what you did after each request, and never push to the remote.")
    # Request 1: inventory.
    chat.user("I'm moving my blog from Jekyll to Hugo. It has about sixty posts. Can you look at the repo and tell "
              "me what we're dealing with?")
    chat.step("bash", {"command": "ls"}, BLOG_LS, text="Let me look around the repository first.")
    chat.step("read_file", {"file_path": "_config.yml"}, JEKYLL_CONFIG)
    chat.step("bash", {"command": "ls _posts | wc -l && ls _posts | head -20"},
              "62\n" + "\n".join(name + ".md" for name in BLOG_POSTS) + "\n")
    chat.step("bash", {"command": "grep -rhoE '\\{% (end)?[a-z_]+( [a-z_]+\\.html)?' _posts "
                                  "| sort | uniq -c | sort -rn"},
              LIQUID_TAGS)
    chat.step("read_file", {"file_path": "_posts/2019-04-02-parsing-gps-tracks-with-python.md"}, GPS_POST,
              text="Posts use Liquid tags Hugo doesn't understand. Let me read a typical post that has most of them.")
    chat.step("read_file", {"file_path": "_includes/callout.html"}, CALLOUT_INCLUDE)
    query = "hugo equivalent of jekyll highlight tag include post_url"
    chat.step("search_web", {"query": query}, search_listing(query, [
        ("Migrating from Jekyll to Hugo: a field guide", "https://www.example.com/blog/jekyll-to-hugo-field-guide",
         "Covers front matter differences, permalinks, Liquid tags and what replaces them: fenced code blocks for "
         "{% highlight %}, shortcodes for includes, and ref/relref for post_url. Also: Hugo reads dates in front "
         "matter strictly, so check imported posts."),
        ("Hugo docs: shortcodes", "https://docs.example.org/hugo/content-management/shortcodes/",
         "Shortcodes are templates called from content with {{< name params >}}. Built-in shortcodes include "
         "figure, highlight, ref, relref and youtube; your own go in layouts/shortcodes/NAME.html."),
        ("Hugo docs: links and cross references", "https://docs.example.org/hugo/content-management/cross-references/",
         "ref and relref return the permalink of another page by its path; a missing page is an error at build "
         "time, which catches broken internal links early."),
        ("Jekyll's highlight tag versus fenced code blocks",
         "https://forum.example.net/t/jekyll-highlight-vs-fences/8812",
         "Fenced code blocks with a language name give the same result in both tools; the highlight tag only adds "
         "the linenos option, which Hugo supports with a code fence attribute."),
        ("Keeping URLs when changing static site generator", "https://www.example.org/articles/keep-your-urls",
         "Match the permalink pattern where you can, and generate redirects (aliases) for what you cannot; check "
         "the old sitemap against the new one before switching DNS."),
    ]))
    chat.say(prose("""
        Here's what we're dealing with:

        - **62 posts** in `_posts`, 2018 to now, with permalinks `/blog/:year/:month/:day/:title.html`.
        - **Liquid tags**: 212 `highlight` blocks (become fenced code), 71 `figure` and 9 `callout` includes
        (become shortcodes; `figure` is built into Hugo, `callout` needs a small template), 19 `post_url` links
        (become `ref`), 4 `raw` blocks and 2 YouTube embeds.
        - **Plugins**: feed, SEO tags, sitemap and pagination all have Hugo built-ins.
        - **URLs**: Hugo can't produce the `.html` endings with pretty URLs, so we'd use
        `/blog/:year/:month/:day/:slug/` and add aliases for the old addresses.

        I'd write a conversion script rather than edit sixty posts by hand. Shall I?
        """))
    # Request 2: conversion.
    chat.user("Yes, go ahead. Keep the URLs working if you can.")
    query = "hugo permalinks :year :month :day :slug config posts section"
    chat.step("search_web", {"query": query}, search_listing(query, [
        ("Hugo docs: permalinks", "https://docs.example.org/hugo/content-management/urls/#permalinks",
         "Set a pattern per section under [permalinks], e.g. posts = \"/:year/:month/:slug/\". Tokens include "
         ":year, :month, :day, :slug, :title, :filename and :section. The date comes from the date front matter."),
        ("Why are my Hugo URLs lowercase?", "https://forum.example.net/t/hugo-urls-lowercase/4410",
         "Hugo lowercases URLs by default; set disablePathToLower = true if old URLs had capitals."),
        ("Ugly URLs in Hugo", "https://www.example.com/blog/hugo-ugly-urls",
         "uglyURLs = true gives /post.html instead of /post/ site-wide; it affects every section and list page, so "
         "most people keep pretty URLs and use aliases for old addresses instead."),
        ("Hugo aliases explained", "https://www.example.org/articles/hugo-aliases",
         "An alias makes Hugo write a small HTML page at the old path with a meta refresh and a canonical link to "
         "the new page. Static hosts that support server-side redirects can use the _redirects output instead."),
    ]))
    chat.step("create_file", {"file_path": "tools/jekyll_to_hugo.py", "content": CONVERTER_V1},
              f"Saved tools/jekyll_to_hugo.py ({line_count(CONVERTER_V1)} lines).")
    chat.step("bash", {"command": "python3 tools/jekyll_to_hugo.py --dry-run"}, converter_traceback())
    chat.step("read_file", {"file_path": "_posts/2018-11-05-first-post.md"}, FIRST_POST,
              text="One post has a date Python's ISO parser rejects. Let me look at it.")
    chat.step("create_file", {"file_path": "tools/jekyll_to_hugo.py", "content": CONVERTER_V2},
              f"Saved tools/jekyll_to_hugo.py ({line_count(CONVERTER_V2)} lines).",
              text="It's a date in email format left over from the WordPress import. I'll accept that format too.")
    chat.step("bash", {"command": "python3 tools/jekyll_to_hugo.py --dry-run"},
              YOUTUBE_WARNINGS + "would write 62 posts, 2 warnings\n")
    chat.step("bash", {"command": "python3 tools/jekyll_to_hugo.py && ls hugo/content/posts | wc -l"},
              YOUTUBE_WARNINGS + "wrote 62 posts, 2 warnings\n62\n",
              text="Only the two YouTube embeds are left, which the script doesn't handle on purpose: Hugo's "
                   "youtube shortcode takes the video id without a name. I'll fix those two once the build works.")
    gps_post = hugo_post(GPS_POST, "parsing-gps-tracks-with-python")
    gps_path = "hugo/content/posts/2019-04-02-parsing-gps-tracks-with-python.md"
    chat.step("bash", {"command": f"sed -n 1,32p {gps_path}"}, "\n".join(gps_post.split("\n")[:32]) + "\n")
    chat.step("create_file", {"file_path": "hugo/hugo.toml", "content": HUGO_CONFIG}, "Saved hugo/hugo.toml.")
    chat.step("bash", {"command": "cd hugo && hugo --minify"},
              HUGO_HEADER + 'Error: error building site: process: readAndProcessContent: '
              f'"/home/maya/blog/{gps_path}:{_line_of(gps_post, "{{< callout")}:1": failed to extract shortcode: '
              'template for shortcode "callout" not found\nTotal in 143 ms\n[exit code 1]\n')
    chat.step("create_file", {"file_path": "hugo/layouts/shortcodes/callout.html", "content": CALLOUT_SHORTCODE},
              "Saved hugo/layouts/shortcodes/callout.html.",
              text="As expected, the callout shortcode is missing. Porting the Jekyll include.")
    chat.step("bash", {"command": "cd hugo && hugo --minify"}, hugo_stats(131, 0, 0, 412))
    chat.say("The site builds: 62 posts plus tag and list pages, 131 pages in all. Posts live at "
             "`/blog/YYYY/MM/DD/slug/`. Next steps: the two YouTube embeds, and aliases for the old `.html` URLs. "
             "Run `hugo server` in `hugo/` to have a look.")
    _blog_later_requests(chat)
    return preset(
        "Long session: a blog migration",
        "A long session over five requests with 30+ tool uses (shell, reads, searches, file writes). Only the "
        "book's rules apply, so bash output stays as it is while reads, searches and file contents become "
        "references; keep_recent = 3 protects the three newest tool uses, including the MIGRATION.md just written.",
        5, "gpt-4o", 10_000, 3, chat.request("gpt-4o", chat_tools("bash", "read_file", "create_file", "search_web")))


def _blog_later_requests(chat: Chat) -> None:
    """Requests 3 to 5 of the blog migration: images, redirects, documentation."""
    gps_post = hugo_post(GPS_POST, "parsing-gps-tracks-with-python")
    # Request 3: images.
    chat.user("I ran hugo server. The text looks right, but the images are broken on every post that had figures.")
    chat.step("bash", {"command": "grep -rn 'assets/img' hugo/content/posts | head -12 && ls hugo/static"},
              "\n".join(figure_lines(gps_post, "2019-04-02-parsing-gps-tracks-with-python")
                        + [f"hugo/content/posts/{name}.md:{line}:{{{{< figure src=\"/assets/img/{name[:4]}/{image}\" "
                           f"caption=\"{caption}\" >}}}}" for name, line, image, caption in [
                               ("2019-04-28-elevation-data-is-noisy", 19, "baro-vs-gps.png",
                                "Barometric altitude is smooth; GPS altitude is not."),
                               ("2019-06-30-midsummer-gravel-loop", 15, "midsummer-map.jpg", "The loop, 94 km."),
                               ("2019-06-30-midsummer-gravel-loop", 38, "lake-crossing.jpg",
                                "The ferry that wasn't running."),
                               ("2019-10-27-plotting-a-year-of-rides", 24, "heatmap-2019.png",
                                "Every ride of 2019 on one map."),
                               ("2020-03-29-maps-with-folium", 41, "folium-layers.png", "Layers you can switch.")]]
                        + figure_lines(BIKE_POST_HUGO, "2020-06-21-rebuilding-a-trail-bike"))
              + "\nls: cannot access 'hugo/static': No such file or directory\n[exit code 2]\n",
              text="The posts still point at /assets/img/, which isn't part of the Hugo site. Let me confirm.")
    query = "hugo page bundles images relative path figure shortcode"
    chat.step("search_web", {"query": query}, search_listing(query, [
        ("Hugo docs: page bundles", "https://docs.example.org/hugo/content-management/page-bundles/",
         "A leaf bundle is a folder with an index.md and its resources (images, data files). Resources are "
         "published next to the page, so content can refer to them by file name, and image processing works on "
         "them."),
        ("Static folder or page bundles for blog images?", "https://forum.example.net/t/static-vs-bundles/10231",
         "Copying assets/ to static/ is the quickest fix when migrating, but bundles keep each post's images with "
         "the post and let you resize them at build time; most migrations end up with bundles."),
        ("Moving Jekyll images into Hugo bundles with a script", "https://www.example.com/blog/jekyll-images-bundles",
         "For each post that references an image, make a folder, move the post to index.md, copy the images in "
         "and rewrite the paths. Keep the originals until the new site is live."),
        ("Hugo image processing: resize and fill", "https://docs.example.org/hugo/content-management/image-processing/",
         "Page resources can be resized, cropped and converted with .Resize, .Fill and .Process, with results "
         "cached in resources/_gen."),
    ]))
    chat.step("read_file", {"file_path": "hugo/content/posts/2020-06-21-rebuilding-a-trail-bike.md"}, BIKE_POST_HUGO)
    chat.step("create_file", {"file_path": "tools/move_images.py", "content": MOVE_IMAGES},
              f"Saved tools/move_images.py ({line_count(MOVE_IMAGES)} lines).",
              text="Page bundles it is: each post with images becomes a folder with its images next to index.md.")
    chat.step("bash", {"command": "python3 tools/move_images.py"},
              "missing: assets/img/2019/elevation-noise.png (in 2019-04-02-parsing-gps-tracks-with-python.md)\n"
              "23 posts bundled, 71 images referenced, 84 images unused\n")
    chat.step("bash", {"command": "ls assets/img/2019 | grep -i elev"},
              "elevation-noise.PNG\nelevation-profile-smoothed.png\n",
              text="One image is missing. Probably a case difference, which macOS ignored and Linux doesn't.")
    chat.step("bash", {"command": "cp assets/img/2019/elevation-noise.PNG hugo/content/posts/2019-04-02-parsing-gps-"
                                  "tracks-with-python/elevation-noise.png && sed -i 's#/assets/img/2019/elevation-"
                                  "noise.png#elevation-noise.png#' hugo/content/posts/2019-04-02-parsing-gps-tracks-"
                                  "with-python/index.md && cd hugo && hugo --minify"},
              hugo_stats(131, 71, 0, 538))
    chat.say("Images work now: 23 posts became page bundles with their 71 images next to them. The one missing image "
             "had an upper-case `.PNG` extension. 84 images in `assets/img` aren't used by any post; they're still "
             "there, nothing was deleted.")
    # Request 4: redirects.
    chat.user("Perfect. Now the old links: a lot of sites link to "
              "/blog/2019/04/02/parsing-gps-tracks-with-python.html. "
              "Can you make those redirect?")
    query = "hugo aliases redirect old .html urls static host"
    chat.step("search_web", {"query": query}, search_listing(query, [
        ("Hugo docs: aliases", "https://docs.example.org/hugo/content-management/urls/#aliases",
         "List old paths under aliases in a page's front matter; Hugo writes an HTML page at each one that "
         "redirects to the page's current URL with a meta refresh and a canonical link."),
        ("Server-side redirects from Hugo aliases", "https://www.example.com/blog/hugo-aliases-server-redirects",
         "Hosts that read a _redirects file can serve real 301s: add a custom output format that loops over every "
         "page's .Aliases. Meta-refresh pages still work everywhere else."),
        ("Do meta refresh redirects pass link value?", "https://seo.example.net/questions/meta-refresh-links",
         "Search engines treat an instant meta refresh much like a permanent redirect, especially with a "
         "canonical link; a server-side 301 remains the safest choice when the host supports it."),
    ]), text="Hugo's aliases are made for this. Checking the details first.")
    chat.step("create_file", {"file_path": "tools/add_aliases.py", "content": ADD_ALIASES},
              f"Saved tools/add_aliases.py ({line_count(ADD_ALIASES)} lines).")
    chat.step("bash", {"command": "python3 tools/add_aliases.py && cd hugo && hugo --minify"},
              "added aliases to 62 posts\n" + hugo_stats(131, 71, 62, 561))
    chat.step("bash", {"command": "cat hugo/public/blog/2019/04/02/parsing-gps-tracks-with-python.html"},
              '<!doctype html><html lang=en><head><title>https://dirtanddata.example.com/blog/2019/04/02/parsing-gps-'
              'tracks-with-python/</title><link rel=canonical href=https://dirtanddata.example.com/blog/2019/04/02/'
              'parsing-gps-tracks-with-python/><meta name=robots content="noindex"><meta charset=utf-8><meta '
              'http-equiv=refresh content="0; url=https://dirtanddata.example.com/blog/2019/04/02/parsing-gps-tracks-'
              'with-python/"></head></html>\n')
    chat.step("bash", {"command": "grep -c '<loc>' _site/sitemap.xml hugo/public/sitemap.xml"},
              "_site/sitemap.xml:71\nhugo/public/sitemap.xml:131\n")
    chat.step("bash", {"command": "grep -rl 'include youtube' hugo/content/posts | xargs sed -i -E "
                                  "'s/\\{% include youtube\\.html id=\"([^\"]+)\" %\\}/{{< youtube \\1 >}}/' && "
                                  "grep -rn 'youtube' hugo/content/posts"},
              "hugo/content/posts/2019-08-11-bikepacking-kit-list.md:48:{{< youtube Xq3T9pLwz0c >}}\n"
              "hugo/content/posts/2021-07-04-riding-the-inland-trail/index.md:23:{{< youtube m4KfR2s8b1E >}}\n",
              text="While I'm at it, the two YouTube embeds.")
    chat.say("Every post now has an alias at its old address: Hugo writes a small page there that redirects to the "
             "new URL and tells search engines which address is canonical. The new sitemap lists all the old "
             "pages plus the tag pages Jekyll didn't generate. I also converted the two YouTube embeds.")
    # Request 5: documentation.
    chat.user("Great. Please write a MIGRATION.md that explains what changed and how I write new posts now.")
    migration = prose("""
        # Moving from Jekyll to Hugo

        The blog was converted from Jekyll to Hugo in one pass with the scripts in `tools/`. The Jekyll site is
        still in the repository root until the Hugo site is live; the Hugo site is in `hugo/`.

        ## What changed

        - **Posts** live in `hugo/content/posts/`. Posts with images are page bundles: a folder named like the post
        with `index.md` and the images next to it.
        - **URLs**: posts are at `/blog/YYYY/MM/DD/slug/`. Every post has an alias at its old Jekyll address
        (`/blog/YYYY/MM/DD/slug.html`), so old links redirect.
        - **Liquid tags** were replaced: code blocks are fenced, `{% include figure.html %}` is `{{< figure >}}`,
        `{% include callout.html %}` is `{{< callout >}}` (template in `hugo/layouts/shortcodes/callout.html`) and
        `{% post_url %}` is `{{< ref >}}`, which fails the build if the target post doesn't exist.
        - **Feed**: Hugo's RSS feed is at `/index.xml` instead of `/feed.xml`.
        - **Unused images**: 84 images in `assets/img/` are not referenced by any post. They were not copied.

        ## Writing a new post

        1. `cd hugo && hugo new content posts/2024-06-30-my-new-post.md` (or make a folder with `index.md` if the
        post has images).
        2. Fill in `title`, `tags` and `description`. Keep `draft: true` until it's ready.
        3. `hugo server -D` shows drafts at http://localhost:1313/.
        4. Remove `draft`, commit, push.

        ## Scripts

        - `tools/jekyll_to_hugo.py`: the one-off conversion. Re-running it overwrites `hugo/content/posts/`.
        - `tools/move_images.py`: turns posts with images into page bundles.
        - `tools/add_aliases.py`: adds the old URL as an alias; safe to re-run.

        ## Still to do

        - Point the DNS at the new host and keep the old site for a month.
        """)
    chat.step("create_file", {"file_path": "MIGRATION.md", "content": migration},
              f"Saved MIGRATION.md ({line_count(migration)} lines).")
    chat.step("bash", {"command": "git status --short | head -25 && git status --short | wc -l"}, dedent("""
        ?? MIGRATION.md
        ?? hugo/
        ?? tools/add_aliases.py
        ?? tools/jekyll_to_hugo.py
        ?? tools/move_images.py
        5
        """))
    chat.say("MIGRATION.md is written. Nothing is committed yet: `hugo/`, the three scripts and MIGRATION.md are new "
             "and untracked. I'd suggest one commit for the scripts and one for the generated site, so the "
             "conversion can be re-run and diffed later.")
    chat.user("Thanks! One thing from MIGRATION.md: the feed moves from /feed.xml to /index.xml. Will people's feed "
              "readers break? Can we keep /feed.xml working?")


# =============================================================================================
# 6. A ~200,000-token migration run, generated from a library of snippets with a seeded RNG.

# Each entity: (class name, table, legacy module, fields). A field is (name, kind, argument) where
# kind is str, text, int, money, qty, bool, datetime, date, fk or enum.
Field = tuple[str, str, Any]
ENTITIES: list[tuple[str, str, str, list[Field]]] = [
    ("Warehouse", "warehouses", "warehouse", [
        ("code", "str", 16), ("name", "str", 120), ("address", "text", None), ("country", "str", 2),
        ("timezone", "str", 64), ("active", "bool", True)]),
    ("Zone", "zones", "zone", [
        ("warehouse_id", "fk", "warehouses"), ("code", "str", 16), ("kind", "enum", ("ambient", "chilled", "frozen",
                                                                                     "hazmat")),
        ("pick_sequence", "int", None), ("active", "bool", True)]),
    ("BinLocation", "bin_locations", "bin_location", [
        ("zone_id", "fk", "zones"), ("label", "str", 32), ("aisle", "str", 8), ("shelf", "int", None),
        ("max_weight_kg", "qty", None), ("blocked", "bool", False)]),
    ("Product", "products", "product", [
        ("sku", "str", 64), ("name", "str", 200), ("description", "text", None), ("unit", "enum", ("each", "box",
                                                                                                   "kg", "m")),
        ("weight_kg", "qty", None), ("list_price", "money", None), ("discontinued", "bool", False)]),
    ("ProductVariant", "product_variants", "product_variant", [
        ("product_id", "fk", "products"), ("sku", "str", 64), ("size", "str", 16), ("colour", "str", 32),
        ("barcode", "str", 14), ("price_delta", "money", None)]),
    ("Supplier", "suppliers", "supplier", [
        ("name", "str", 160), ("vat_number", "str", 20), ("country", "str", 2), ("payment_terms_days", "int", None),
        ("lead_time_days", "int", None), ("active", "bool", True)]),
    ("SupplierContact", "supplier_contacts", "supplier_contact", [
        ("supplier_id", "fk", "suppliers"), ("full_name", "str", 120), ("email", "str", 254), ("phone", "str", 32),
        ("primary_contact", "bool", False)]),
    ("PurchaseOrder", "purchase_orders", "purchase_order", [
        ("supplier_id", "fk", "suppliers"), ("warehouse_id", "fk", "warehouses"), ("number", "str", 20),
        ("status", "enum", ("draft", "sent", "confirmed", "received", "cancelled")), ("ordered_on", "date", None),
        ("expected_on", "date", None), ("total", "money", None)]),
    ("PurchaseOrderLine", "purchase_order_lines", "purchase_order_line", [
        ("purchase_order_id", "fk", "purchase_orders"), ("product_id", "fk", "products"), ("quantity", "qty", None),
        ("unit_cost", "money", None), ("received_quantity", "qty", None)]),
    ("Receipt", "receipts", "receipt", [
        ("purchase_order_id", "fk", "purchase_orders"), ("received_at", "datetime", None),
        ("received_by", "str", 64), ("note", "text", None)]),
    ("ReceiptLine", "receipt_lines", "receipt_line", [
        ("receipt_id", "fk", "receipts"), ("product_id", "fk", "products"), ("bin_location_id", "fk",
                                                                             "bin_locations"),
        ("quantity", "qty", None), ("damaged", "bool", False)]),
    ("StockLevel", "stock_levels", "stock_level", [
        ("product_id", "fk", "products"), ("bin_location_id", "fk", "bin_locations"), ("on_hand", "qty", None),
        ("reserved", "qty", None), ("reorder_point", "qty", None)]),
    ("StockMovement", "stock_movements", "stock_movement", [
        ("product_id", "fk", "products"), ("from_bin_id", "fk", "bin_locations"), ("to_bin_id", "fk",
                                                                                   "bin_locations"),
        ("quantity", "qty", None), ("reason", "enum", ("receipt", "pick", "transfer", "adjustment", "return")),
        ("moved_at", "datetime", None)]),
    ("CycleCount", "cycle_counts", "cycle_count", [
        ("bin_location_id", "fk", "bin_locations"), ("counted_at", "datetime", None), ("counted_by", "str", 64),
        ("expected", "qty", None), ("counted", "qty", None), ("approved", "bool", False)]),
    ("Customer", "customers", "customer", [
        ("number", "str", 16), ("name", "str", 160), ("email", "str", 254), ("country", "str", 2),
        ("credit_limit", "money", None), ("blocked", "bool", False)]),
    ("SalesOrder", "sales_orders", "sales_order", [
        ("customer_id", "fk", "customers"), ("warehouse_id", "fk", "warehouses"), ("number", "str", 20),
        ("status", "enum", ("new", "allocated", "picking", "shipped", "cancelled")), ("ordered_at", "datetime",
                                                                                       None),
        ("total", "money", None)]),
    ("SalesOrderLine", "sales_order_lines", "sales_order_line", [
        ("sales_order_id", "fk", "sales_orders"), ("product_id", "fk", "products"), ("quantity", "qty", None),
        ("unit_price", "money", None), ("discount_pct", "qty", None)]),
    ("Carrier", "carriers", "carrier", [
        ("code", "str", 16), ("name", "str", 120), ("tracking_url", "str", 255), ("active", "bool", True)]),
    ("Shipment", "shipments", "shipment", [
        ("sales_order_id", "fk", "sales_orders"), ("carrier_id", "fk", "carriers"), ("tracking_number", "str", 64),
        ("shipped_at", "datetime", None), ("weight_kg", "qty", None), ("status", "enum", ("packed", "handed_over",
                                                                                         "delivered", "lost"))]),
    ("ShipmentPackage", "shipment_packages", "shipment_package", [
        ("shipment_id", "fk", "shipments"), ("length_cm", "int", None), ("width_cm", "int", None),
        ("height_cm", "int", None), ("weight_kg", "qty", None)]),
    ("ReturnAuthorization", "return_authorizations", "return_authorization", [
        ("sales_order_id", "fk", "sales_orders"), ("number", "str", 20), ("reason", "text", None),
        ("status", "enum", ("requested", "approved", "received", "refunded", "rejected")),
        ("requested_at", "datetime", None)]),
    ("ReturnLine", "return_lines", "return_line", [
        ("return_authorization_id", "fk", "return_authorizations"), ("product_id", "fk", "products"),
        ("quantity", "qty", None), ("restock", "bool", True)]),
    ("PriceList", "price_lists", "price_list", [
        ("name", "str", 80), ("currency", "str", 3), ("valid_from", "date", None), ("valid_to", "date", None),
        ("default_list", "bool", False)]),
    ("PriceListItem", "price_list_items", "price_list_item", [
        ("price_list_id", "fk", "price_lists"), ("product_id", "fk", "products"), ("unit_price", "money", None),
        ("min_quantity", "qty", None)]),
    ("UserAccount", "user_accounts", "user_account", [
        ("username", "str", 64), ("email", "str", 254), ("role", "enum", ("viewer", "editor", "admin")),
        ("warehouse_id", "fk", "warehouses"), ("last_login_at", "datetime", None), ("active", "bool", True)]),
    ("AuditEvent", "audit_events", "audit_event", [
        ("user_account_id", "fk", "user_accounts"), ("action", "str", 32), ("entity", "str", 64),
        ("entity_id", "int", None), ("payload", "text", None), ("created", "datetime", None)]),
]

_LEGACY_TYPES = {"str": "String({})", "text": "Text", "int": "Integer", "money": "DECIMAL(12, 2)",
                 "qty": "DECIMAL(12, 3)", "bool": "TINYINT(1)", "datetime": "DateTime", "date": "Date",
                 "fk": "Integer", "enum": "Enum({})"}
_NEW_TYPES = {"str": ("str", "String({})"), "text": ("str | None", "Text"), "int": ("int", None),
              "money": ("Decimal", "Numeric(12, 2)"), "qty": ("Decimal", "Numeric(12, 3)"), "bool": ("bool", None),
              "datetime": ("datetime", "DateTime(timezone=True)"), "date": ("date", None), "fk": ("int", None),
              "enum": ("str", "String(16)")}
_PYDANTIC = {"str": "str", "text": "str | None", "int": "int", "money": "Decimal", "qty": "Decimal", "bool": "bool",
             "datetime": "datetime", "date": "date", "fk": "int", "enum": "{}"}


def _class_of(table: str) -> str:
    return next(name for name, other, _, _ in ENTITIES if other == table)


def legacy_model(name: str, table: str, module: str, fields: list[Field]) -> str:
    kinds = {kind for _, kind, _ in fields}
    imports = ["Column", "DateTime", "Index", "Integer", *sorted(
        {"String" for k in kinds if k == "str"} | {"Text" for k in kinds if k == "text"}
        | {"Date" for k in kinds if k == "date"} | {"Enum" for k in kinds if k == "enum"}
        | {"ForeignKey" for k in kinds if k == "fk"})]
    mysql = sorted({"DECIMAL" for k in kinds if k in ("money", "qty")} | {"TINYINT" for k in kinds if k == "bool"})
    lines = ["# -*- coding: utf-8 -*-", f'"""{name} model (stockroom 1.x)."""', "from datetime import datetime", "",
             f"from sqlalchemy import {', '.join(sorted(set(imports)))}"]
    if mysql:
        lines.append(f"from sqlalchemy.dialects.mysql import {', '.join(mysql)}")
    if "fk" in kinds:
        lines.append("from sqlalchemy.orm import backref, relationship")
    lines += ["", "from stockroom.db import Base", "", "", f"class {name}(Base):", f"    __tablename__ = '{table}'"]
    indexed = [field for field, kind, _ in fields if kind == "fk" or field in ("sku", "code", "number", "email")]
    lines.append("    __table_args__ = (")
    lines += [f"        Index('ix_{table}_{field}', '{field}')," for field in indexed]
    lines += ["        {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8'},", "    )", "",
              "    id = Column(Integer, primary_key=True)"]
    for field, kind, arg in fields:
        column = _LEGACY_TYPES[kind].format(arg if kind == "str" else ", ".join(f"'{v}'" for v in arg)
                                            if kind == "enum" else "")
        extra = ""
        if kind == "fk":
            column = f"Integer, ForeignKey('{arg}.id')"
            extra = ", nullable=False"
        elif kind == "bool":
            extra = f", nullable=False, default={1 if arg else 0}, server_default='{1 if arg else 0}'"
        elif kind == "enum":
            extra = f", nullable=False, default='{arg[0]}'"
        elif kind == "str" and field in ("sku", "code", "number", "username"):
            extra = ", nullable=False, unique=True"
        lines.append(f"    {field} = Column({column}{extra})")
    lines += ["    created_at = Column(DateTime, default=datetime.utcnow)",
              "    updated_at = Column(DateTime, default=datetime.utcnow, onupdate=datetime.utcnow)", ""]
    for field, kind, arg in fields:
        if kind == "fk":
            target = _class_of(arg)
            attribute = field[:-3]
            lines.append(f"    {attribute} = relationship('{target}', foreign_keys=[{field}],")
            lines.append(f"{' ' * (20 + len(attribute))}backref=backref('{table}', lazy='dynamic'))")
    lines += ["", "    def to_dict(self):", "        return {", "            'id': self.id,"]
    for field, kind, _ in fields:
        if kind in ("money", "qty"):
            value = f"str(self.{field}) if self.{field} is not None else None"
        elif kind in ("datetime", "date"):
            value = f"self.{field}.isoformat() if self.{field} else None"
        elif kind == "bool":
            value = f"bool(self.{field})"
        else:
            value = f"self.{field}"
        lines.append(f"            '{field}': {value},")
    lines += ["            'created_at': self.created_at.isoformat() if self.created_at else None,",
              "            'updated_at': self.updated_at.isoformat() if self.updated_at else None,", "        }", "",
              "    def __repr__(self):", f"        return '<{name} %r>' % self.id", ""]
    return "\n".join(lines)


def legacy_views(name: str, table: str, module: str, fields: list[Field]) -> str:
    plural = table
    filters = [field for field, kind, _ in fields if kind in ("fk", "enum", "bool")][:3]
    required = [field for field, kind, _ in fields if kind in ("str", "fk", "money")][:4]
    lines = ["# -*- coding: utf-8 -*-", "from flask import Blueprint, abort, jsonify, request", "",
             "from stockroom.auth import require_role", "from stockroom.db import session",
             f"from stockroom.models.{module} import {name}", "",
             f"bp = Blueprint('{plural}', __name__, url_prefix='/api/{plural.replace('_', '-')}')", "",
             f"FIELDS = ({', '.join(repr(f) for f, _, _ in fields)},)",
             f"REQUIRED = ({', '.join(repr(f) for f in required)},)", "", "",
             "@bp.route('/', methods=['GET'])", "@require_role('viewer')", f"def list_{plural}():",
             f"    query = session.query({name})"]
    for field in filters:
        lines += [f"    if request.args.get('{field}') is not None:",
                  f"        query = query.filter({name}.{field} == request.args['{field}'])"]
    lines += ["    page = int(request.args.get('page', 1))",
              "    per_page = min(int(request.args.get('per_page', 50)), 200)",
              f"    items = query.order_by({name}.id).offset((page - 1) * per_page).limit(per_page).all()",
              "    return jsonify({'items': [item.to_dict() for item in items], 'page': page})", "", "",
              "@bp.route('/<int:item_id>', methods=['GET'])", "@require_role('viewer')",
              f"def get_{module}(item_id):", f"    item = session.query({name}).get(item_id)", "    if item is None:",
              "        abort(404)", "    return jsonify(item.to_dict())", "", "",
              "@bp.route('/', methods=['POST'])", "@require_role('editor')", f"def create_{module}():",
              "    data = request.get_json(force=True) or {}",
              "    missing = [field for field in REQUIRED if data.get(field) in (None, '')]", "    if missing:",
              "        return jsonify({'error': 'missing fields', 'fields': missing}), 400",
              f"    item = {name}(**{{key: data[key] for key in FIELDS if key in data}})", "    session.add(item)",
              "    try:", "        session.commit()", "    except Exception:", "        session.rollback()",
              "        raise", "    return jsonify(item.to_dict()), 201", "", "",
              "@bp.route('/<int:item_id>', methods=['PUT'])", "@require_role('editor')",
              f"def update_{module}(item_id):", f"    item = session.query({name}).get(item_id)",
              "    if item is None:", "        abort(404)", "    data = request.get_json(force=True) or {}",
              "    for key in FIELDS:", "        if key in data:", "            setattr(item, key, data[key])",
              "    session.commit()", "    return jsonify(item.to_dict())", "", "",
              "@bp.route('/<int:item_id>', methods=['DELETE'])", "@require_role('admin')",
              f"def delete_{module}(item_id):", f"    item = session.query({name}).get(item_id)",
              "    if item is None:", "        abort(404)", "    session.delete(item)", "    session.commit()",
              "    return '', 204", ""]
    return "\n".join(lines)


def new_model(name: str, table: str, module: str, fields: list[Field], nullable: bool = True) -> str:
    """The SQLAlchemy 2.0 model. ``nullable``: dates and texts may be NULL, as they could in MySQL."""
    kinds = {kind for _, kind, _ in fields}
    sqla = sorted({"String" for k in kinds if k in ("str", "enum")} | {"Text" for k in kinds if k == "text"}
                  | {"Numeric" for k in kinds if k in ("money", "qty")} | {"ForeignKey" for k in kinds if k == "fk"}
                  | {"DateTime", "func"})
    stdlib = sorted({"datetime"} | {"date" for k in kinds if k == "date"})
    targets = sorted({_class_of(arg) for _, kind, arg in fields if kind == "fk"})
    lines = [f'"""{name}: ported from legacy/stockroom/models/{module}.py (SQLAlchemy 2.0 typed mapping)."""', "",
             "from __future__ import annotations", "", f"from datetime import {', '.join(stdlib)}"]
    if kinds & {"money", "qty"}:
        lines.append("from decimal import Decimal")
    lines += ["from typing import TYPE_CHECKING", "", f"from sqlalchemy import {', '.join(sqla)}",
              "from sqlalchemy.orm import Mapped, mapped_column" + (", relationship" if targets else ""), "",
              "from app.db import Base", ""]
    if targets:
        lines += ["if TYPE_CHECKING:"] + [f"    from app.models.{_module_of(t)} import {t}" for t in targets] + [""]
    lines += ["", f"class {name}(Base):", f'    __tablename__ = "{table}"', "",
              "    id: Mapped[int] = mapped_column(primary_key=True)"]
    for field, kind, arg in fields:
        annotation, column = _NEW_TYPES[kind]
        if nullable and kind in ("date", "datetime"):
            annotation += " | None"
        elif not nullable and kind == "text":
            annotation = "str"
        args = [column.format(arg)] if column else []
        if kind == "fk":
            args = [f'ForeignKey("{arg}.id", ondelete="RESTRICT")', "index=True"]
        elif kind == "bool":
            args.append(f"default={arg}, server_default={'sa_true()' if arg else 'sa_false()'}")
        elif kind == "enum":
            args.append(f'default="{arg[0]}"')
        elif kind == "str" and field in ("sku", "code", "number", "username"):
            args.append("unique=True")
        elif kind == "str" and field == "email":
            args.append("index=True")
        lines.append(f"    {field}: Mapped[{annotation}] = mapped_column({', '.join(args)})")
    lines += ["    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())",
              "    updated_at: Mapped[datetime] = mapped_column(", "        DateTime(timezone=True), "
              "server_default=func.now(), onupdate=func.now()", "    )"]
    relations = [(field, arg) for field, kind, arg in fields if kind == "fk"]
    if relations:
        lines.append("")
        for field, arg in relations:
            lines.append(f"    {field[:-3]}: Mapped[{_class_of(arg)}] = relationship(foreign_keys=[{field}])")
    lines += ["", "    def __repr__(self) -> str:", f'        return f"<{name} {{self.id}}>"', ""]
    text = "\n".join(lines)
    if "sa_true()" in text or "sa_false()" in text:
        text = text.replace("from sqlalchemy import ", "from sqlalchemy import false as sa_false, true as sa_true, ", 1)
    return text


def _module_of(class_name: str) -> str:
    return next(module for name, _, module, _ in ENTITIES if name == class_name)


def new_router(name: str, table: str, module: str, fields: list[Field]) -> str:
    prefix = table.replace("_", "-")
    kinds = {kind for _, kind, _ in fields}
    enums = [(field, arg) for field, kind, arg in fields if kind == "enum"]
    filters = [(field, kind) for field, kind, _ in fields if kind in ("fk", "enum", "bool")][:3]
    lines = [f'"""/api/{prefix}: ported from legacy/stockroom/views/{module}.py (Flask) to FastAPI."""', "",
             "from __future__ import annotations", ""]
    stdlib = sorted({"datetime"} | {"date" for k in kinds if k == "date"})
    lines.append(f"from datetime import {', '.join(stdlib)}")
    if kinds & {"money", "qty"}:
        lines.append("from decimal import Decimal")
    if enums:
        lines.append("from typing import Literal")
    lines += ["", "from fastapi import APIRouter, Depends, HTTPException, Query, Response, status",
              "from pydantic import BaseModel, ConfigDict, Field", "from sqlalchemy import select",
              "from sqlalchemy.orm import Session", "", "from app.auth import require_role",
              "from app.db import get_session", f"from app.models.{module} import {name}", "",
              f'router = APIRouter(prefix="/api/{prefix}", tags=["{prefix}"])', ""]
    for field, values in enums:
        alias = "".join(part.title() for part in field.split("_"))
        lines.append(f"{name}{alias} = Literal[{', '.join(repr(v).replace(chr(39), chr(34)) for v in values)}]")
    lines += ["", "", f"class {name}In(BaseModel):"]
    for field, kind, arg in fields:
        annotation = _PYDANTIC[kind]
        if kind == "enum":
            annotation = name + "".join(part.title() for part in field.split("_"))
        if kind == "str":
            lines.append(f"    {field}: {annotation} = Field(max_length={arg})")
        elif kind == "bool":
            lines.append(f"    {field}: bool = {arg}")
        elif kind in ("money", "qty"):
            lines.append(f"    {field}: {annotation} = Field(ge=0, decimal_places={2 if kind == 'money' else 3})")
        elif kind == "text":
            lines.append(f"    {field}: str | None = None")
        elif kind in ("date", "datetime"):
            lines.append(f"    {field}: {annotation} | None = None")
        else:
            lines.append(f"    {field}: {annotation}")
    lines += ["", "", f"class {name}Out({name}In):", "    model_config = ConfigDict(from_attributes=True)", "",
              "    id: int", "    created_at: datetime", "    updated_at: datetime", "", "",
              f"class {name}Page(BaseModel):", f"    items: list[{name}Out]", "    page: int", "", "",
              f'@router.get("/", response_model={name}Page)', f"def list_{table}(",
              "    page: int = Query(1, ge=1),", "    per_page: int = Query(50, ge=1, le=200),"]
    for field, kind in filters:
        annotation = {"fk": "int", "bool": "bool"}.get(kind, "str")
        lines.append(f"    {field}: {annotation} | None = None,")
    lines += ["    session: Session = Depends(get_session),", '    _: None = Depends(require_role("viewer")),',
              f") -> {name}Page:", f"    query = select({name}).order_by({name}.id)"]
    for field, _ in filters:
        lines += [f"    if {field} is not None:", f"        query = query.where({name}.{field} == {field})"]
    lines += ["    items = session.scalars(query.offset((page - 1) * per_page).limit(per_page)).all()",
              f"    return {name}Page(items=items, page=page)", "", "",
              f'@router.get("/{{item_id}}", response_model={name}Out)',
              f"def get_{module}(item_id: int, session: Session = Depends(get_session),",
              f"         {' ' * len(module)}_: None = Depends(require_role(\"viewer\"))) -> {name}:",
              "    return _get_or_404(session, item_id)", "", "",
              f'@router.post("/", response_model={name}Out, status_code=status.HTTP_201_CREATED)',
              f"def create_{module}(body: {name}In, session: Session = Depends(get_session),",
              f"        {' ' * len(module)}    _: None = Depends(require_role(\"editor\"))) -> {name}:",
              f"    item = {name}(**body.model_dump())", "    session.add(item)", "    session.commit()",
              "    session.refresh(item)", "    return item", "", "",
              f'@router.put("/{{item_id}}", response_model={name}Out)',
              f"def update_{module}(item_id: int, body: {name}In, session: Session = Depends(get_session),",
              f"        {' ' * len(module)}    _: None = Depends(require_role(\"editor\"))) -> {name}:",
              "    item = _get_or_404(session, item_id)", "    for key, value in body.model_dump().items():",
              "        setattr(item, key, value)", "    session.commit()", "    session.refresh(item)",
              "    return item", "", "", '@router.delete("/{item_id}", status_code=status.HTTP_204_NO_CONTENT)',
              f"def delete_{module}(item_id: int, session: Session = Depends(get_session),",
              f"        {' ' * len(module)}    _: None = Depends(require_role(\"admin\"))) -> Response:",
              "    session.delete(_get_or_404(session, item_id))", "    session.commit()",
              "    return Response(status_code=status.HTTP_204_NO_CONTENT)", "", "",
              f"def _get_or_404(session: Session, item_id: int) -> {name}:", f"    item = session.get({name}, item_id)",
              "    if item is None:",
              f'        raise HTTPException(status.HTTP_404_NOT_FOUND, f"{name} {{item_id}} not found")',
              "    return item", ""]
    return "\n".join(lines)


def alembic_revision(rng: random.Random, table: str, fields: list[Field], previous: str) -> tuple[str, str]:
    revision = f"{rng.getrandbits(48):012x}"
    columns = ['        sa.Column("id", sa.Integer(), primary_key=True),']
    for field, kind, arg in fields:
        kind_text = {"str": f"sa.String({arg})", "text": "sa.Text()", "int": "sa.Integer()",
                     "money": "sa.Numeric(12, 2)", "qty": "sa.Numeric(12, 3)", "bool": "sa.Boolean()",
                     "datetime": "sa.DateTime(timezone=True)", "date": "sa.Date()", "fk": "sa.Integer()",
                     "enum": "sa.String(16)"}[kind]
        extra = ""
        if kind == "fk":
            extra = f', sa.ForeignKey("{arg}.id", ondelete="RESTRICT"), nullable=False'
        elif kind == "bool":
            extra = f", nullable=False, server_default=sa.{'true' if arg else 'false'}()"
        elif kind == "text":
            extra = ", nullable=True"
        columns.append(f'        sa.Column("{field}", {kind_text}{extra}),')
    columns += ['        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), '
                'nullable=False),',
                '        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), '
                'nullable=False),']
    checks = []
    for field, kind, arg in fields:
        if kind == "enum":
            allowed = ", ".join(f"'{value}'" for value in arg)
            checks.append(f'    op.create_check_constraint("ck_{table}_{field}", "{table}", "{field} IN ({allowed})")')
    indexes = [f'    op.create_index("ix_{table}_{field}", "{table}", ["{field}"])'
               for field, kind, _ in fields if kind == "fk" or field in ("email",)]
    text = "\n".join([
        f'"""create {table}', "", f"Revision ID: {revision}", f"Revises: {previous}",
        f"Create Date: 2024-09-0{rng.randint(2, 6)} {rng.randint(9, 17):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}.{rng.randint(100000, 999999)}", '"""', "", "import sqlalchemy as sa",
        "from alembic import op", "", f'revision = "{revision}"', f'down_revision = "{previous}"',
        "branch_labels = None", "depends_on = None", "", "", "def upgrade() -> None:", "    op.create_table(",
        f'        "{table}",', *columns, "    )", *checks, *indexes, "", "", "def downgrade() -> None:",
        f'    op.drop_table("{table}")', ""])
    return revision, text


_FIRST = ["Anna", "Johan", "Lea", "Mikael", "Sara", "Tomas", "Elin", "Oskar", "Maja", "Karl", "Ida", "Jonas",
          "Nora", "Viktor", "Agnes", "Pekka", "Helena", "Lars", "Ingrid", "Mats"]
_LAST = ["Berg", "Lund", "Holm", "Nyström", "Ek", "Sandberg", "Virtanen", "Dahl", "Strand", "Wikström", "Falk",
         "Jensen", "Larsen", "Kowalski", "de Vries", "Novak"]
_WORDS = ["steel", "shelf", "bracket", "cable", "tie", "pallet", "wrap", "label", "roll", "carton", "tape",
          "hinge", "bolt", "washer", "glove", "bin", "hook", "clamp", "strap", "box", "divider", "lid", "crate"]
_NOTES = ["", "", "", "Delivered to dock 2", "Partial delivery, rest next week", "Call before delivery",
          "Pallet damaged, photos in ticket", "Customer asked for \"fragile\" label", "Re-counted after audit",
          "Moved from old site, check labels", "Approved by shift lead", "Wrong SKU on packing slip, fixed"]
_COUNTRIES = ["SE", "SE", "SE", "NO", "DK", "FI", "DE", "NL", "PL", "GB"]


def _csv_value(rng: random.Random, row: int, field: str, kind: str, arg: Any) -> str:
    if kind == "fk":
        return str(rng.randint(1, 4000))
    if kind == "enum":
        return rng.choice(arg) if rng.random() > 0.01 else ""
    if kind == "bool":
        return "1" if (rng.random() < 0.8) == bool(arg) else "0"
    if kind == "int":
        return str(rng.randint(0, 90) if "days" in field or "cm" in field else rng.randint(1, 5000))
    if kind == "money":
        return f"{rng.uniform(0.5, 2500):.2f}"
    if kind == "qty":
        return f"{rng.choice([1, 2, 5, 10, 12, 24, 48, 100]) * rng.choice([1, 1, 1, 0.5, 2.5]):.3f}"
    if kind in ("datetime", "date"):
        if rng.random() < 0.02:
            return "0000-00-00 00:00:00" if kind == "datetime" else "0000-00-00"
        stamp = f"20{rng.randint(19, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        return stamp + (f" {rng.randint(6, 21):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
                        if kind == "datetime" else "")
    if kind == "text":
        return rng.choice(_NOTES)
    if field == "email":
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        local = f"{first}.{last}".lower().replace(" ", "").replace("ö", "o")
        return (local if rng.random() > 0.05 else local.title()) + "@" + rng.choice(
            ["example.com", "example.org", "example.net"])
    if field in ("full_name", "received_by", "counted_by", "username"):
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        return name.lower().replace(" ", ".") if field != "full_name" else name
    if field == "country":
        return rng.choice(_COUNTRIES)
    if field == "currency":
        return rng.choice(["SEK", "EUR", "NOK", "DKK"])
    if field == "timezone":
        return "Europe/Stockholm" if rng.random() < 0.7 else rng.choice(["Europe/Oslo", "Europe/Helsinki"])
    if field in ("sku", "barcode", "tracking_number", "vat_number", "phone"):
        return {"sku": f"SKU-{rng.randint(10000, 99999)}", "barcode": str(rng.randint(10**12, 10**13 - 1)),
                "tracking_number": f"JJ{rng.randint(10**9, 10**10 - 1)}SE",
                "vat_number": f"SE{rng.randint(10**9, 10**10 - 1)}01",
                "phone": f"+46 {rng.randint(70, 79)} {rng.randint(100, 999)} {rng.randint(10, 99)} "
                         f"{rng.randint(10, 99)}"}[field]
    if field in ("code", "number", "label", "aisle"):
        prefix = {"code": "C", "number": "N", "label": "B", "aisle": "A"}[field]
        return f"{prefix}{row + rng.randint(1, 9):05d}" + (" " if rng.random() < 0.02 else "")
    if field in ("size", "colour"):
        return rng.choice(["S", "M", "L", "XL"] if field == "size" else ["black", "grey", "blue", "red", "natural"])
    if field in ("action", "entity"):
        return rng.choice(["create", "update", "delete", "login"] if field == "action" else
                          ["product", "stock_level", "sales_order", "receipt", "user_account"])
    if field == "tracking_url":
        return f"https://track.example.net/{rng.choice(['pn', 'dhl', 'db', 'ups'])}/{{tracking_number}}"
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 4)))
    return words.capitalize() + (f" {rng.randint(10, 400)} mm" if rng.random() < 0.4 else "")


def csv_sample(rng: random.Random, table: str, fields: list[Field], rows: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", *(field for field, _, _ in fields), "created_at", "updated_at"])
    key = rng.randint(1, 20000)
    for row in range(rows):
        key += rng.choice([1, 1, 1, 2, 3])
        created = f"20{rng.randint(19, 23)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} " \
                  f"{rng.randint(6, 21):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        updated = "0000-00-00 00:00:00" if rng.random() < 0.03 else created
        writer.writerow([key, *(_csv_value(rng, row, f, k, a) for f, k, a in fields),
                         created, updated])
    return out.getvalue()


def copy_log(rng: random.Random, table: str, fields: list[Field], rows: int,
             clock: list[float]) -> tuple[str, list[str]]:
    """tools/copy_table.py's log (about 20 progress lines at most), and the data problems it reported."""
    batch = 5000
    batches = max(1, -(-rows // batch))
    every = max(1, -(-batches // 20))

    def stamp(seconds: float) -> str:
        clock[0] += seconds
        now = clock[0]
        return f"2024-09-04 {now // 3600:02.0f}:{now % 3600 // 60:02.0f}:{now % 60:06.3f}"

    lines = [f"{stamp(0.05)} INFO copy_table: source=mysql://legacy-db/stockroom.{table} "
             f"target=postgresql://pg-main/stockroom.{table}",
             f"{stamp(rng.uniform(0.1, 0.6))} INFO copy_table: {rows:,} rows to copy in batches of {batch}"]
    start, pending = clock[0], 0.0
    for number in range(1, batches + 1):
        took = rng.uniform(0.3, 0.5) * min(batch, rows - (number - 1) * batch) / 1000 + rng.uniform(0.05, 0.2)
        pending += took
        if number % every == 0 or number == batches:
            last = min(number * batch, rows)
            lines.append(f"{stamp(pending)} INFO copy_table: batch {number}/{batches} rows {last:,}/{rows:,} "
                         f"({100 * last / rows:.0f}%) last batch {took:.2f}s")
            pending = 0.0
    problems = []
    small = rows < 200
    for field, kind, arg in fields:
        if kind in ("datetime", "date") and rng.random() < 0.5:
            bad = sorted(rng.sample(range(1, rows + 1), min(rows, rng.randint(1, 6))))
            problems.append(f"{len(bad)} zero dates in {field} set to NULL")
            lines.append(f"{stamp(0.01)} WARNING copy_table: {len(bad)} rows with zero dates ('0000-00-00') in "
                         f"{field} set to NULL: ids {', '.join(map(str, bad))}")
        elif kind == "fk" and not small and rng.random() < 0.3:
            orphans = rng.randint(1, 40)
            problems.append(f"{orphans} rows with {field} pointing to deleted {arg}")
            lines.append(f"{stamp(0.01)} WARNING copy_table: {orphans} rows reference missing {arg}.id via {field}; "
                         f"written to orphans/{table}.{field}.csv and skipped")
        elif kind == "enum" and not small and rng.random() < 0.4:
            empty = rng.randint(1, 12)
            problems.append(f"{empty} empty {field} values mapped to '{arg[0]}'")
            lines.append(f"{stamp(0.01)} WARNING copy_table: {empty} rows with empty {field} (MySQL enum error "
                         f"value) mapped to default '{arg[0]}'")
        elif field == "email" and not small:
            duplicates = rng.randint(2, 9)
            problems.append(f"{duplicates} emails that differ only in case")
            lines.append(f"{stamp(0.01)} WARNING copy_table: {duplicates} pairs of {field} values differ only in "
                         f"case; kept both, see duplicates/{table}.{field}.csv")
    lines.append(f"{stamp(rng.uniform(0.05, 0.3))} INFO copy_table: sequence {table}_id_seq set to "
                 f"{rows + rng.randint(50, 9000)}")
    lines.append(f"{stamp(rng.uniform(0.5, 3.0))} INFO copy_table: done: {rows:,} rows in {clock[0] - start:.1f}s; "
                 f"row counts match; checksums match for {len(fields) + 3} of {len(fields) + 3} columns")
    return "\n".join(lines) + "\n", problems


MIGRATION_SEARCHES: dict[str, list[tuple[str, str, str]]] = {
    "sqlalchemy 2.0 Mapped mapped_column nullable Optional annotation": [
        ("SQLAlchemy 2.0 docs: declarative tables with mapped_column",
         "https://docs.example.org/sqlalchemy/20/orm/declarative_tables.html",
         "With annotated declarative mapping, nullability follows the annotation: Mapped[str] is NOT NULL and "
         "Mapped[str | None] is nullable, unless mapped_column(nullable=...) says otherwise."),
        ("Migrating to SQLAlchemy 2.0: a checklist", "https://www.example.com/blog/sqlalchemy-2-migration-checklist",
         "Replace Query.get with Session.get, session.query(...) with select(), backref with back_populates, and "
         "review every column that was implicitly nullable in 1.x models: 2.0 annotations make it explicit."),
        ("Why is my column NOT NULL after upgrading?", "https://forum.example.net/t/sqlalchemy-not-null-upgrade/2281",
         "Because the annotation is Mapped[date] rather than Mapped[date | None]. Alembic autogenerate picks it "
         "up and the data copy then fails on legacy NULLs."),
        ("Typed relationships in SQLAlchemy 2.0", "https://docs.example.org/sqlalchemy/20/orm/basic_relationships.html",
         "Annotate relationships with Mapped[Target] or Mapped[list[Target]]; forward references work with "
         "from __future__ import annotations and TYPE_CHECKING imports."),
    ],
    "mysql zero date 0000-00-00 postgres migration": [
        ("Zero dates when moving from MySQL", "https://www.example.org/articles/mysql-zero-dates",
         "MySQL in non-strict mode stores invalid dates as 0000-00-00. PostgreSQL rejects them; map them to NULL "
         "during the copy and make the target column nullable, or pick a sentinel and document it."),
        ("MySQL docs: the DATE, DATETIME and TIMESTAMP types",
         "https://docs.example.org/mysql/8.0/datetime.html",
         "The zero value '0000-00-00' is permitted unless NO_ZERO_DATE is enabled; it is returned as a string "
         "by most client libraries."),
        ("Data migration lessons from a 10-year-old schema", "https://engineering.example.com/posts/old-schema-lessons",
         "Every table older than strict mode had at least a few zero dates. We logged them per table and asked "
         "the business which ones mattered before setting them to NULL."),
        ("pgloader and zero dates", "https://forum.example.net/t/pgloader-zero-dates/7712",
         "Use a cast rule that turns zero dates into NULL; otherwise the batch containing them fails."),
    ],
    "mysql tinyint(1) to postgresql boolean migration": [
        ("Booleans across databases", "https://www.example.org/articles/booleans-mysql-postgres",
         "MySQL's BOOL is TINYINT(1) and will happily store 2 or -1. Check for values other than 0 and 1 before "
         "casting to PostgreSQL boolean, and decide what they mean."),
        ("SQLAlchemy Boolean and server defaults", "https://docs.example.org/sqlalchemy/20/core/type_basics.html",
         "Use server_default=sa.true() or sa.false() for portable defaults instead of the strings '1' and '0'."),
        ("TINYINT(1) surprises", "https://engineering.example.com/posts/tinyint-surprises",
         "One table used TINYINT(1) as a three-state flag (0, 1, 2). Mapping it to boolean would have lost the "
         "third state; we made it a small enum instead."),
    ],
    "fastapi 422 vs 400 validation error keep legacy api compatible": [
        ("FastAPI docs: handling errors", "https://docs.example.org/fastapi/tutorial/handling-errors/",
         "Request validation errors return 422 with a detail list. Override the handler for "
         "RequestValidationError to change the status code or body, for example to keep an older API's shape."),
        ("Keeping API compatibility while porting from Flask", "https://www.example.com/blog/flask-to-fastapi-compat",
         "Decide early whether clients depend on status codes and error bodies. We kept 400 and the old error "
         "shape for one release with a custom exception handler, then switched to 422."),
        ("422 or 400 for validation errors?", "https://forum.example.net/t/422-or-400/3391",
         "Both are defensible. 422 is what FastAPI and many APIs use; what matters is documenting it and telling "
         "clients before changing it."),
        ("Pydantic v2 error format", "https://docs.example.org/pydantic/latest/errors/validation_errors/",
         "Each error has type, loc, msg and input; loc names the field, which makes it easy to build the legacy "
         "'missing fields' list from it."),
    ],
    "postgresql case insensitive unique email citext vs lower index": [
        ("Case-insensitive uniqueness in PostgreSQL", "https://www.example.org/articles/postgres-case-insensitive",
         "Two options: the citext extension, or a unique index on lower(email). The index keeps the column a "
         "plain text type and works well with SQLAlchemy's Index with a functional expression."),
        ("PostgreSQL docs: citext", "https://docs.example.org/postgresql/16/citext.html",
         "citext compares values case-insensitively by calling lower() internally; nondeterministic collations "
         "are an alternative on recent versions."),
        ("Cleaning up duplicate emails before adding a constraint",
         "https://engineering.example.com/posts/duplicate-emails",
         "Find duplicates with GROUP BY lower(email) HAVING count(*) > 1, merge or rename them with the business, "
         "then add the unique index in a separate migration."),
    ],
    "alembic create_table foreign key ondelete restrict naming convention": [
        ("Alembic docs: operation reference", "https://docs.example.org/alembic/ops.html",
         "op.create_table accepts Column and constraint objects; ForeignKey(..., ondelete='RESTRICT') is emitted "
         "as part of the column definition."),
        ("Naming constraints consistently", "https://docs.example.org/sqlalchemy/20/core/constraints.html",
         "Set a naming_convention on MetaData so indexes, unique and foreign key constraints get predictable "
         "names; Alembic can then drop them reliably in downgrades."),
        ("Ordering table creation with foreign keys", "https://forum.example.net/t/alembic-fk-order/5523",
         "Create parent tables first or add foreign keys in a later revision. With one revision per table, "
         "follow the dependency order of the schema."),
    ],
    "sqlalchemy Numeric Decimal pydantic v2 serialization json string": [
        ("Pydantic v2: Decimal in JSON", "https://docs.example.org/pydantic/latest/api/standard_library_types/",
         "Decimal values serialize to strings in JSON mode by default, which preserves precision; use a custom "
         "serializer if clients expect numbers."),
        ("Money in APIs: strings or numbers?", "https://www.example.com/blog/money-in-apis",
         "Strings avoid binary floating point surprises in JavaScript clients. If the old API returned strings, "
         "keep doing so."),
        ("SQLAlchemy Numeric with asdecimal", "https://docs.example.org/sqlalchemy/20/core/type_basics.html#numeric",
         "Numeric returns Decimal by default; set asdecimal=False only if you really want floats."),
    ],
    "copy large table mysql to postgres batches copy protocol psycopg 3": [
        ("psycopg 3: COPY from Python", "https://docs.example.org/psycopg/3/basic/copy.html",
         "cursor.copy() streams rows to PostgreSQL with the COPY protocol, much faster than executemany; write "
         "rows with copy.write_row() in batches."),
        ("Moving 200 million rows without downtime", "https://engineering.example.com/posts/moving-200m-rows",
         "Copy in id ranges, verify counts and checksums per range, then replay changes made during the copy "
         "from the binlog or an updated_at column."),
        ("Resetting sequences after a bulk load", "https://www.example.org/articles/postgres-sequences-after-load",
         "After copying rows with explicit ids, set each sequence past the maximum id with setval, or inserts "
         "will fail with duplicate keys."),
        ("Checksums for data migrations", "https://forum.example.net/t/checksums-migration/6120",
         "Compare md5 of a canonical text form per column and id range on both sides; normalize decimals and "
         "timestamps first."),
    ],
}


def _sample_value(field: str, kind: str, arg: Any) -> Any:
    """A value the API tests send for a field (fk fields are filled in by a fixture)."""
    if kind == "str":
        known = {"email": "anna.berg@example.com", "country": "SE", "currency": "SEK",
                 "timezone": "Europe/Stockholm",
                 "sku": "SKU-10042", "barcode": "7350012345678", "vat_number": "SE556677889901",
                 "phone": "+46 70 123 45 67", "tracking_url": "https://track.example.net/pn/{tracking_number}"}
        return known.get(field, f"test-{field.replace('_', '-')}"[:arg])
    return {"text": "Created by the API tests", "int": 3, "money": "125.50", "qty": "12.000", "bool": not arg,
            "datetime": "2024-03-01T10:00:00+00:00", "date": "2024-03-01", "fk": 1,
            "enum": arg[1] if isinstance(arg, tuple) else None}[kind]


def api_tests(name: str, table: str, module: str, fields: list[Field]) -> str:
    """tests/api/test_MODULE.py as the team ported it: the behaviour the new router must keep."""
    prefix = table.replace("_", "-")
    required = [field for field, kind, _ in fields if kind in ("str", "fk", "money")][:4]
    lines = [f'"""API tests for /api/{prefix}, ported from legacy/tests/test_{module}_views.py."""', "",
             "from __future__ import annotations", "", "import pytest", "", f'PATH = "/api/{prefix}/"', "", "",
             "@pytest.fixture", "def payload(make):", "    return {"]
    for field, kind, arg in fields:
        value = f'make("{arg}").id' if kind == "fk" else repr(_sample_value(field, kind, arg)).replace("'", '"')
        lines.append(f'        "{field}": {value},')
    lines += ["    }", "", "", "def test_list_starts_empty(client):", "    response = client.get(PATH)",
              "    assert response.status_code == 200", '    assert response.json() == {"items": [], "page": 1}', "",
              "", "def test_create_and_get(client, payload):", "    created = client.post(PATH, json=payload)",
              "    assert created.status_code == 201",
              "    body = client.get(f\"{PATH}{created.json()['id']}\").json()",
              "    for key, value in payload.items():", "        assert body[key] == value", "", "",
              f"def test_create_{module}_requires_fields(client):", "    response = client.post(PATH, json={})",
              "    assert response.status_code == 400", '    assert response.json()["error"] == "missing fields"',
              f'    assert set(response.json()["fields"]) >= {{{", ".join(chr(34) + f + chr(34) for f in required)}}}',
              "", "", "def test_update(client, payload):", "    item = client.post(PATH, json=payload).json()"]
    first, first_kind, first_arg = fields[0] if fields[0][1] != "fk" else next(
        (f for f in fields if f[1] in ("str", "int", "qty", "money")), fields[0])
    changed = repr(_sample_value(first, first_kind, first_arg)).replace("'", '"')
    if first_kind == "str":
        changed = '"changed"' if first_arg >= 7 else '"NO"'
    lines += [f'    payload["{first}"] = {changed}',
              "    response = client.put(f\"{PATH}{item['id']}\", json=payload)",
              "    assert response.status_code == 200", f'    assert response.json()["{first}"] == payload["{first}"]',
              "", "", "def test_get_missing_is_404(client):",
              '    assert client.get(f"{PATH}999999").status_code == 404',
              "", "", "def test_delete_needs_admin(client, payload, as_role):",
              "    item = client.post(PATH, json=payload).json()", '    with as_role("editor"):',
              "        assert client.delete(f\"{PATH}{item['id']}\").status_code == 403",
              '    with as_role("admin"):', "        assert client.delete(f\"{PATH}{item['id']}\").status_code == 204"]
    for field, kind, arg in fields:
        if kind in ("fk", "enum", "bool") and field in [f for f, k, _ in fields if k in ("fk", "enum", "bool")][:3]:
            value = repr(_sample_value(field, kind, arg)).replace("'", '"').replace("True", "true").replace(
                "False", "false")
            query = f'payload["{field}"]' if kind == "fk" else value
            lines += ["", "", f"def test_filter_by_{field}(client, payload):", "    client.post(PATH, json=payload)",
                      f'    response = client.get(PATH, params={{"{field}": {query}}})',
                      '    assert len(response.json()["items"]) == 1']
        elif kind in ("date", "datetime") and field == next(f for f, k, _ in fields if k in ("date", "datetime")):
            lines += ["", "", f"def test_create_{module}_without_{field}(client, payload):",
                      f'    payload.pop("{field}")', "    response = client.post(PATH, json=payload)",
                      "    assert response.status_code == 201", f'    assert response.json()["{field}"] is None']
        elif kind == "money":
            lines += ["", "", f"def test_{field}_is_a_decimal_string(client, payload):",
                      f'    payload["{field}"] = "19.90"', "    response = client.post(PATH, json=payload)",
                      f'    assert response.json()["{field}"] == "19.90"']
        elif kind == "str" and arg <= 32:
            lines += ["", "", f"def test_{field}_longer_than_{arg}_is_rejected(client, payload):",
                      f'    payload["{field}"] = "x" * {arg + 1}',
                      "    assert client.post(PATH, json=payload).status_code == 400"]
    return "\n".join(lines) + "\n"


def test_names(source: str) -> int:
    return source.count("\ndef test_")


def _test_function(source: str, name: str, upto: str) -> tuple[str, int]:
    """pytest's view of a failing test: its source up to the failing line, and that line's number."""
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = next(i for i in range(start, len(lines)) if upto in lines[i])
    shown = ["    " + line for line in lines[start:end]]
    return "\n".join([*shown, ">   " + lines[end]]), end + 1


def pytest_pass(rng: random.Random, module: str, tests: int) -> str:
    return (f"tests/api/test_{module}.py " + "." * tests).ljust(73) + " [100%]\n" \
        f"{tests} passed in {rng.uniform(0.8, 2.4):.2f}s\n"


def pytest_null_failure(rng: random.Random, source: str, table: str, module: str, field: str) -> str:
    tests = test_names(source)
    name = f"test_create_{module}_without_{field}"
    position = [line[4:line.index("(")] for line in source.split("\n") if line.startswith("def test_")].index(name)
    shown, line = _test_function(source, name, "response = client.post(PATH, json=payload)")
    payload = {f: _sample_value(f, k, a) for f, k, a in _fields_of(table) if f != field}
    return "\n".join([
        f"tests/api/test_{module}.py {'.' * position}F{'.' * (tests - position - 1)}".ljust(73) + " [100%]",
        " FAILURES ".center(80, "="),
        _pytest_header(name),
        "",
        "client = <starlette.testclient.TestClient object at 0x7f3b2c1d9e50>",
        f"payload = {payload!r}",
        "",
        shown,
        "",
        f"tests/api/test_{module}.py:{line}: ",
        "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
        ".venv/lib/python3.12/site-packages/sqlalchemy/engine/default.py:941: in do_execute",
        "    cursor.execute(statement, parameters)",
        "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
        "",
        "self = <psycopg.Cursor [closed] [INERROR] (host=localhost database=stockroom_test) at 0x7f3b2bf0a8d0>",
        f'query = "INSERT INTO {table} ({", ".join(payload)}) VALUES (...) RETURNING {table}.id, {table}.created_at, '
        f'{table}.updated_at"',
        "",
        ">       raise ex.with_traceback(None)",
        f'E       sqlalchemy.exc.IntegrityError: (psycopg.errors.NotNullViolation) null value in column "{field}" '
        f'of relation "{table}" violates not-null constraint',
        f"E       DETAIL:  Failing row contains ({rng.randint(1, 50)}, ..., null, ...).",
        "",
        ".venv/lib/python3.12/site-packages/psycopg/cursor.py:732: IntegrityError",
        " short test summary info ".center(80, "="),
        f"FAILED tests/api/test_{module}.py::{name} - sqlalchemy.exc.IntegrityError: "
        f'(psycopg.errors.NotNullViolation) null value in column "{field}" of relation "{table}" violates '
        "not-null constraint",
        f"1 failed, {tests - 1} passed in {rng.uniform(1.1, 2.9):.2f}s",
        "[exit code 1]",
    ]) + "\n"


def pytest_status_failure(rng: random.Random, source: str, table: str, module: str) -> str:
    tests = test_names(source)
    name = f"test_create_{module}_requires_fields"
    position = [line[4:line.index("(")] for line in source.split("\n") if line.startswith("def test_")].index(name)
    shown, line = _test_function(source, name, "assert response.status_code == 400")
    return "\n".join([
        f"tests/api/test_{module}.py {'.' * position}F{'.' * (tests - position - 1)}".ljust(73) + " [100%]",
        " FAILURES ".center(80, "="),
        _pytest_header(name),
        "",
        "client = <starlette.testclient.TestClient object at 0x7f0e9a3c2d10>",
        "",
        shown,
        "E       assert 422 == 400",
        "E        +  where 422 = <Response [422 Unprocessable Entity]>.status_code",
        "",
        f"tests/api/test_{module}.py:{line}: AssertionError",
        " Captured log call ".center(80, "-"),
        f"INFO     httpx:_client.py:1026 HTTP Request: POST http://testserver/api/{table.replace('_', '-')}/ "
        '"HTTP/1.1 422 Unprocessable Entity"',
        " short test summary info ".center(80, "="),
        f"FAILED tests/api/test_{module}.py::{name} - assert 422 == 400",
        f"1 failed, {tests - 1} passed in {rng.uniform(1.1, 2.9):.2f}s",
        "[exit code 1]",
    ]) + "\n"


def _fields_of(table: str) -> list[Field]:
    return next(fields for _, other, _, fields in ENTITIES if other == table)


ERRORS_MODULE = dedent('''
    """Keep the legacy API's error shape for validation errors: 400 and {"error", "fields"}.

    The Flask service answered a request with missing fields with 400 and
    {"error": "missing fields", "fields": [...]}. Clients (the handheld scanners' app, the ERP
    connector) check for that, so v2 keeps it until they are updated; see MIGRATION_LOG.md.
    """

    from __future__ import annotations

    import logging

    from fastapi import FastAPI, Request, status
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    log = logging.getLogger(__name__)


    def install(app: FastAPI) -> None:
        @app.exception_handler(RequestValidationError)
        async def legacy_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
            log.debug("validation failed: %s", exc.errors())
            missing = [str(error["loc"][-1]) for error in exc.errors() if error["type"] == "missing"]
            if missing:
                body = {"error": "missing fields", "fields": missing}
            else:
                body = {"error": "invalid fields", "fields": [str(error["loc"][-1]) for error in exc.errors()],
                        "detail": [{"field": str(error["loc"][-1]), "message": error["msg"]} for error in exc.errors()]}
            return JSONResponse(body, status_code=status.HTTP_400_BAD_REQUEST)
    ''')


LEGACY_DB = dedent('''
    # -*- coding: utf-8 -*-
    """Database session for stockroom 1.x (MySQL 5.7)."""
    import os

    from sqlalchemy import create_engine
    from sqlalchemy.ext.declarative import declarative_base
    from sqlalchemy.orm import scoped_session, sessionmaker

    DATABASE_URL = os.environ.get('STOCKROOM_DB', 'mysql+pymysql://stockroom@legacy-db/stockroom?charset=utf8')

    engine = create_engine(DATABASE_URL, pool_recycle=3600, pool_size=10, max_overflow=20)
    session = scoped_session(sessionmaker(bind=engine, autocommit=False, autoflush=False))
    Base = declarative_base()
    Base.query = session.query_property()


    def init_app(app):
        @app.teardown_appcontext
        def remove_session(exception=None):
            session.remove()
    ''')

NEW_DB = dedent('''
    """Database access for stockroom 2 (PostgreSQL 16, SQLAlchemy 2.0, psycopg 3)."""

    from __future__ import annotations

    import os
    from collections.abc import Iterator

    from sqlalchemy import MetaData, create_engine
    from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

    DATABASE_URL = os.environ.get("STOCKROOM_DATABASE_URL", "postgresql+psycopg://stockroom@pg-main/stockroom")

    NAMING = {
        "ix": "ix_%(table_name)s_%(column_0_name)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }


    class Base(DeclarativeBase):
        metadata = MetaData(naming_convention=NAMING)


    engine = create_engine(DATABASE_URL, pool_size=10, max_overflow=10, pool_pre_ping=True)
    SessionLocal = sessionmaker(bind=engine, expire_on_commit=False)


    def get_session() -> Iterator[Session]:
        with SessionLocal() as session:
            yield session
    ''')

COPY_TABLE_HEAD = dedent('''
    """Copy one table from the legacy MySQL database to PostgreSQL, in id batches.

    usage: python -m tools.copy_table TABLE [--batch N] [--dry-run]

    Rows are read with a server-side cursor and written with COPY. Values PostgreSQL would reject are
    fixed and logged, never silently: zero dates become NULL, empty enum values become the column
    default, rows whose foreign key points nowhere are written to orphans/TABLE.COLUMN.csv and
    skipped. At the end the sequence is moved past the largest id and row counts and per-column
    checksums are compared.
    """

    from __future__ import annotations

    import argparse
    import csv
    import hashlib
    import logging
    import time
    from pathlib import Path

    import psycopg
    import pymysql
    from sqlalchemy import inspect

    from app.db import Base, engine

    log = logging.getLogger("copy_table")
    ZERO_DATES = {"0000-00-00", "0000-00-00 00:00:00"}


    def batches(cursor, table: str, size: int):
        cursor.execute(f"SELECT MIN(id), MAX(id) FROM `{table}`")
        low, high = cursor.fetchone()
        for start in range(low or 0, (high or 0) + 1, size):
            cursor.execute(f"SELECT * FROM `{table}` WHERE id >= %s AND id < %s ORDER BY id", (start, start + size))
            yield cursor.fetchall()
    ''')


SAMPLE_ROWS = 70  # rows in each exports/samples/TABLE.csv: tunes the run to about 200,000 tokens
TABLE_ROWS = {
    "warehouses": 7, "zones": 41, "bin_locations": 18_240, "products": 18_406, "product_variants": 41_772,
    "suppliers": 612, "supplier_contacts": 1_484, "purchase_orders": 86_310, "purchase_order_lines": 402_957,
    "receipts": 79_118, "receipt_lines": 371_604, "stock_levels": 96_233, "stock_movements": 1_842_377,
    "cycle_counts": 22_415, "customers": 9_871, "sales_orders": 512_660, "sales_order_lines": 904_118,
    "carriers": 12, "shipments": 498_201, "shipment_packages": 611_930, "return_authorizations": 14_217,
    "return_lines": 19_844, "price_lists": 55, "price_list_items": 61_402, "user_accounts": 318,
    "audit_events": 3_615_902,
}


# What the agent looks up before porting a table (other searches follow from what goes wrong).
RESEARCH = {
    "Zone": "alembic create_table foreign key ondelete restrict naming convention",
    "BinLocation": "mysql tinyint(1) to postgresql boolean migration",
    "Product": "sqlalchemy Numeric Decimal pydantic v2 serialization json string",
    "StockMovement": "copy large table mysql to postgres batches copy protocol psycopg 3",
}


def app_main(modules: list[str], errors: bool) -> str:
    """app/main.py with a router for every table ported so far."""
    return "\n".join([
        '"""stockroom 2: the FastAPI application. Routers are added here as tables are ported."""', "",
        "from __future__ import annotations", "", "import logging", "", "from fastapi import FastAPI", "",
        "from app import " + ("errors, " if errors else "") + "health", "from app.routers import (",
        *(f"    {module}," for module in modules), ")", "", "logging.basicConfig(level=logging.INFO)",
        'log = logging.getLogger("stockroom")', "",
        'app = FastAPI(title="stockroom", version="2.0.0-dev", docs_url="/api/docs", '
        'openapi_url="/api/openapi.json")', *(["errors.install(app)"] if errors else []),
        "app.include_router(health.router)", *(f"app.include_router({module}.router)" for module in modules), ""])


def large_run() -> Json:  # noqa: PLR0915 - one long, linear script of an agent run
    rng = random.Random(20240904)
    chat = Chat(606, "You are a migration agent. You port the stockroom service from its legacy Flask + MySQL code "
                     "base (legacy/) to FastAPI + PostgreSQL (app/), one table at a time in foreign-key order: "
                     "model, router, Alembic revision, tests, then the data copy with tools/copy_table.py. Never "
                     "drop or change legacy data. Report data problems instead of hiding them, and keep "
                     "MIGRATION_LOG.md up to date.")
    chat.user("Please start the stockroom migration. The new skeleton (app/db.py, app/auth.py, alembic/) and the "
              "copy tool are in place; the API tests in tests/api/ were ported by the team last sprint and describe "
              "the behaviour we want to keep. Go table by table and log everything in MIGRATION_LOG.md.")
    rows = TABLE_ROWS
    chat.step("bash", {"command": "ls legacy/stockroom legacy/stockroom/models app tools tests/api | head -80"},
              "legacy/stockroom:\n__init__.py\napp.py\nauth.py\ndb.py\nmodels\nviews\n\nlegacy/stockroom/models:\n"
              + "".join(f"{module}.py\n" for _, _, module, _ in sorted(ENTITIES, key=lambda e: e[2]))
              + "\napp:\n__init__.py\nauth.py\ndb.py\nmain.py\nmodels\nrouters\n\ntools:\n__init__.py\n"
              "copy_table.py\nverify_counts.py\n\ntests/api:\n" + "".join(
                  f"test_{module}.py\n" for _, _, module, _ in sorted(ENTITIES, key=lambda e: e[2])),
              text="Let me get an overview of both code bases first.")
    chat.step("read_file", {"file_path": "legacy/stockroom/db.py"}, LEGACY_DB)
    chat.step("read_file", {"file_path": "app/db.py"}, NEW_DB)
    chat.step("read_file", {"file_path": "tools/copy_table.py"}, COPY_TABLE_HEAD + "\n\n# … 214 more lines …\n")
    chat.step("bash", {"command": "mysql -h legacy-db stockroom -e \"SELECT table_name, table_rows, "
                                  "round(data_length/1024/1024) AS mb FROM information_schema.tables WHERE "
                                  "table_schema='stockroom' ORDER BY table_name\""},
              "+" + "-" * 27 + "+------------+-------+\n| table_name                | table_rows | mb    |\n+"
              + "-" * 27 + "+------------+-------+\n"
              + "".join(f"| {table:<25} | {count:>10} | {max(1, count // 9000):>5} |\n"
                        for table, count in sorted(rows.items()))
              + "+" + "-" * 27 + "+------------+-------+\n")
    chat.say("Both code bases follow the same layout: one model and one Flask blueprint per table in legacy/, and "
             "the new app expects one model and one router per table. I'll go in foreign-key order, starting with "
             "warehouses.")
    log_entries: list[str] = []
    decisions: list[str] = []
    revision = "0001_baseline"
    clock = [9 * 3600 + 12 * 60.0]
    learned_nullable = False
    errors_installed = False
    ported: list[str] = []

    def search(query: str) -> None:
        chat.step("search_web", {"query": query}, search_listing(query, MIGRATION_SEARCHES[query]))

    for number, (name, table, module, fields) in enumerate(ENTITIES):
        has_dates = any(kind in ("date", "datetime") for _, kind, _ in fields)
        chat.step("read_file", {"file_path": f"legacy/stockroom/models/{module}.py"},
                  legacy_model(name, table, module, fields),
                  text=None if number % 3 else f"Next table: {table}.")
        chat.step("read_file", {"file_path": f"legacy/stockroom/views/{module}.py"},
                  legacy_views(name, table, module, fields))
        tests_source = api_tests(name, table, module, fields)
        chat.step("read_file", {"file_path": f"tests/api/test_{module}.py"}, tests_source)
        tests = test_names(tests_source)
        if name in RESEARCH:
            search(RESEARCH[name])
        first_try_nullable = learned_nullable or not has_dates
        chat.step("create_file", {"file_path": f"app/models/{module}.py",
                                  "content": new_model(name, table, module, fields, first_try_nullable)},
                  f"Saved app/models/{module}.py.")
        chat.step("create_file", {"file_path": f"app/routers/{module}.py",
                                  "content": new_router(name, table, module, fields)},
                  f"Saved app/routers/{module}.py.")
        ported.append(module)
        chat.step("create_file", {"file_path": "app/main.py", "content": app_main(ported, errors_installed)},
                  "Saved app/main.py.")
        previous = revision
        revision, migration = alembic_revision(rng, table, fields, previous)
        chat.step("create_file", {"file_path": f"alembic/versions/{revision}_create_{table}.py", "content": migration},
                  f"Saved alembic/versions/{revision}_create_{table}.py.")
        upgraded = ("INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
                    "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
                    f"INFO  [alembic.runtime.migration] Running upgrade {previous} -> {revision}, create {table}\n")
        test = f"pytest -q tests/api/test_{module}.py"
        first_run = f"alembic upgrade head && {test}"
        if not errors_installed:
            chat.step("bash", {"command": first_run},
                      upgraded + pytest_status_failure(rng, tests_source, table, module))
            chat.say("The port works except for error responses: FastAPI answers missing fields with 422 and its own "
                     "error list, while the legacy API (and the ported test) use 400 with "
                     "{\"error\": \"missing fields\", \"fields\": [...]}.")
            search("fastapi 422 vs 400 validation error keep legacy api compatible")
            chat.step("create_file", {"file_path": "app/errors.py", "content": ERRORS_MODULE}, "Saved app/errors.py.",
                      text="Clients depend on the old shape, so I'll keep it with an exception handler for now and "
                           "note it in the log as something to retire.")
            chat.step("bash", {"command": "sed -i 's/^app = FastAPI(.*)$/&\\nerrors.install(app)/' app/main.py && "
                                          "sed -i 's/^from app import /from app import errors, /' app/main.py && "
                                          + test}, pytest_pass(rng, module, tests))
            errors_installed = True
            decisions.append("Validation errors keep the legacy shape (400, {\"error\", \"fields\"}) through "
                             "app/errors.py until the scanner app and ERP connector accept 422.")
        elif not first_try_nullable:
            field = next(field for field, kind, _ in fields if kind in ("date", "datetime"))
            chat.step("bash", {"command": first_run},
                      upgraded + pytest_null_failure(rng, tests_source, table, module, field))
            search("sqlalchemy 2.0 Mapped mapped_column nullable Optional annotation")
            chat.step("create_file", {"file_path": f"app/models/{module}.py",
                                      "content": new_model(name, table, module, fields, True)},
                      f"Saved app/models/{module}.py.",
                      text=f"In SQLAlchemy 2.0 `Mapped[date]` means NOT NULL, but `{field}` was nullable in MySQL "
                           "and the tests create rows without it. Dates and free text become optional, here and "
                           "in the remaining tables.")
            chat.step("bash", {"command": f"alembic downgrade -1 && alembic upgrade head && {test}"},
                      f"INFO  [alembic.runtime.migration] Running downgrade {revision} -> {previous}, create {table}\n"
                      f"INFO  [alembic.runtime.migration] Running upgrade {previous} -> {revision}, create {table}\n"
                      + pytest_pass(rng, module, tests))
            learned_nullable = True
            decisions.append("Columns that were nullable in MySQL stay nullable (Mapped[... | None]); SQLAlchemy 2.0 "
                             "annotations would otherwise make them NOT NULL.")
        else:
            chat.step("bash", {"command": first_run}, upgraded + pytest_pass(rng, module, tests))
        log, problems = copy_log(rng, table, fields, rows[table], clock)
        orphans = sum(int(problem.split()[0]) for problem in problems if "pointing to deleted" in problem)
        chat.step("bash", {"command": f"python -m tools.copy_table {table} --batch 5000 && "
                                      f"python -m tools.verify_counts {table}"},
                  log + f"{table}: mysql={rows[table]} postgres={rows[table] - orphans} orphans={orphans} OK\n")
        if problems:
            if "zero dates" in " ".join(problems) and not any("zero dates" in d for d in decisions):
                search("mysql zero date 0000-00-00 postgres migration")
                decisions.append("MySQL zero dates ('0000-00-00') are copied as NULL and listed per table below.")
            chat.step("read_file", {"file_path": f"exports/samples/{table}.csv"},
                      csv_sample(random.Random(f"sample:{table}"), table, fields, min(rows[table], SAMPLE_ROWS)),
                      text=f"The copy reported {'; '.join(problems)}. Checking a sample of the source rows.")
            for problem in problems:
                if "pointing to deleted" in problem:
                    count, field = int(problem.split()[0]), problem.split()[3]
                    chat.step("read_file", {"file_path": f"orphans/{table}.{field}.csv"},
                              csv_sample(random.Random(f"orphans:{table}.{field}"), table, fields, count))
        log_entries.append(f"- **{table}** ({rows[table]:,} rows): model, router, revision `{revision}`; tests pass."
                           + (f" Data: {'; '.join(problems)}." if problems else " No data problems."))
        if number % 5 == 4 or number == len(ENTITIES) - 1:
            content = "\n".join(["# Stockroom migration log", "",
                                 "Legacy Flask + MySQL 5.7 (legacy/) to FastAPI + PostgreSQL 16 (app/). One Alembic "
                                 "revision per table; data copied with tools/copy_table.py and checked with "
                                 "tools/verify_counts.py.", "", "## Decisions", "",
                                 *(f"- {decision}" for decision in decisions), "",
                                 f"## Tables ({len(log_entries)} of {len(ENTITIES)})", "", *log_entries, ""])
            chat.step("create_file", {"file_path": "MIGRATION_LOG.md", "content": content},
                      "Saved MIGRATION_LOG.md.", text="Updating the migration log.")
        if number == 8:
            chat.user("How is it going? The ERP team is asking whether the API stays compatible for them.")
            chat.say(f"{number + 1} of {len(ENTITIES)} tables are done. For the ERP team: same URLs under /api/, same "
                     "JSON field names, decimals still serialized as strings, and validation errors keep the old "
                     "400 shape for now. Two differences: a list filter with the wrong type (?supplier_id=abc) now "
                     "gets a 400 instead of an empty list, and timestamps carry a time zone (UTC offset).")
        elif name == "Customer":
            chat.user("About duplicate customer emails that differ only in case: keep both rows for now, sales will "
                      "merge them by hand. Just make sure they're listed.")
            search("postgresql case insensitive unique email citext vs lower index")
            decisions.append("Customer emails: no case-insensitive unique index yet; duplicates are listed in "
                             "duplicates/customers.email.csv for sales to merge.")
            chat.say("Understood: both rows are kept and listed in duplicates/customers.email.csv. Once sales has "
                     "merged them, a unique index on lower(email) can be added in its own migration.")
        elif number == 18:
            chat.user("Looks good so far. Can you speed up a bit? Only look at the CSV samples when the copy reports "
                      "something odd.")
            chat.say("Will do. That is what I have been doing, but I'll keep the checks short.")
    counts = [test_names(api_tests(*entity)) for entity in ENTITIES]
    chat.step("bash", {"command": "pytest -q tests/api && python -m tools.verify_counts --all"},
              "".join((f"tests/api/test_{module}.py " + "." * count).ljust(73)
                      + f" [{100 * sum(counts[:i + 1]) // sum(counts):>3}%]\n"
                      for i, ((_, _, module, _), count) in enumerate(zip(ENTITIES, counts, strict=True)))
              + f"{sum(counts)} passed in 41.37s\n"
              + "".join(f"{table}: OK\n" for _, table, _, _ in ENTITIES)
              + f"all {len(ENTITIES)} tables verified\n",
              text=f"All {len(ENTITIES)} tables are ported and copied. Running the whole API suite and the count check "
                   "once more.")
    rules = {
        "tool_calls": BOOK_CALL_RULES,
        "tool_results": [*BOOK_RESULT_RULES,
                         {"tool": "bash", "template": "Output of `{command}` omitted ({lines} lines). "
                                                      "Re-run if needed.", "min_tokens": 300}],
    }
    return preset(
        "Large run: 200,000 tokens",
        "A generated migration run of about 200,000 tokens and several hundred items, porting 26 tables one by one. "
        "Compaction replaces file reads, searches and written files with references and long shell output too "
        "(short output stays: it is below the bash rule's min_tokens); use it to feel how fast counting and "
        "compaction are on a big request. It runs on gpt-4.1, whose context window (about a million tokens) "
        "holds it; gpt-4o's 128,000 would not.",
        6, "gpt-4.1", 150_000, 0, chat.request("gpt-4.1", chat_tools("read_file", "create_file", "search_web",
                                                                     "bash")),
        rules)


# =============================================================================================

BUILDERS: dict[str, Callable[[], Json]] = {
    "book-report.json": book_report,
    "coding-agent.json": coding_agent,
    "research-agent.json": research_agent,
    "anthropic-support.json": anthropic_support,
    "long-session.json": long_session,
    "large-200k.json": large_run,
}


def build() -> dict[str, str]:
    """Every preset file's name and exact text."""
    return {name: dump(builder()) for name, builder in BUILDERS.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the example conversations in presets/.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing the files that differ from what would be written")
    parser.add_argument("--out", type=Path, default=PRESETS_DIR, help="folder to write to (default: presets/)")
    args = parser.parse_args(argv)
    files = build()
    if args.check:
        stale = [name for name, text in files.items()
                 if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text]
        for name in stale:
            print(f"differs: {args.out / name}", file=sys.stderr)
        if stale:
            print("run: python scripts/make_presets.py", file=sys.stderr)
            return 1
        print(f"{len(files)} presets up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"wrote {args.out / name} ({len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
