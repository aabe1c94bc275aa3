# ruff: noqa: E501  (the query templates are kept one per line)
"""Real text queries for the synthetic router benchmark: 8 domains, templates with slot fillers.

A template is a (frame, topic) pair of a domain (8 frames × 6 topics = 48 per domain); its
latent difficulty is the sum of the frame's and the topic's difficulty. Slots (names, numbers,
objects, phrasings) and an optional framing prefix/suffix make the strings distinct, so that
semantically close queries — same domain, same template — share outcomes, as real benchmark
queries do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DOMAINS", "Query", "sample_queries"]

NAMES = [
    "Ava",
    "Ben",
    "Chen",
    "Dara",
    "Eli",
    "Farah",
    "Gus",
    "Hana",
    "Ivan",
    "Jade",
    "Kofi",
    "Lena",
    "Mateo",
    "Nia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sam",
    "Tariq",
]
PREFIXES = [
    "",
    "",
    "",
    "Quick question: ",
    "Please help: ",
    "I am stuck on this. ",
    "Can you answer this? ",
    "For a class assignment: ",
    "Be concise. ",
    "Explain step by step. ",
    "My friend asked me this and I am not sure. ",
]
SUFFIXES = [
    "",
    "",
    "",
    " Thanks!",
    " Please keep it short.",
    " Show your reasoning.",
    " Answer in plain English.",
]


@dataclass(frozen=True)
class Domain:
    name: str
    frames: tuple[str, ...]  # easiest first
    topics: dict[str, dict[str, list[str]]]  # topic -> slot fillers
    output_tokens: int  # typical answer length


def _d(name, frames, topics, output_tokens):
    return Domain(name, tuple(frames), topics, output_tokens)


DOMAINS: tuple[Domain, ...] = (
    _d(
        "arithmetic",
        [
            "{name} has {a} {item} and buys {b} more. How many {item} does {name} have now?",
            "{name} had {c} {item} and gave {b} of them to {name2}. How many {item} are left?",
            "A box holds {a} {item}. How many {item} are there in {b} boxes?",
            "{name} shares {c} {item} equally among {b} friends. How many does each friend get, and how many are left over?",
            "{name} buys {b} packs of {item} at {a} dollars each and pays with a {c}0 dollar bill. How much change does {name} get?",
            "The price of a pack of {item} rose from {a} to {c} dollars. What is the percentage increase?",
            "{name} collects {b} {item} a day for {a} days, then gives away a third of them. How many does {name} keep?",
            "If {a} workers pack {c} {item} in {b} hours, how many hours do {b}{a} workers need to pack the same amount at the same rate?",
        ],
        {
            "apples": {"item": ["apples", "pears", "oranges"]},
            "books": {"item": ["books", "notebooks", "comics"]},
            "marbles": {"item": ["marbles", "beads", "buttons"]},
            "stickers": {"item": ["stickers", "stamps", "postcards"]},
            "coins": {"item": ["coins", "tokens", "tickets"]},
            "pencils": {"item": ["pencils", "crayons", "markers"]},
        },
        90,
    ),
    _d(
        "code",
        [
            "How do I reverse a {ds} in {lang}?",
            "Write a {lang} function that checks whether a string is a palindrome.",
            "What does the error '{err}' mean in {lang}, and how do I fix it?",
            "Implement binary search over a sorted {ds} in {lang}.",
            "Explain the difference between a {ds} and a {ds2} in {lang}.",
            "Optimise this {lang} code that sums the squares of {a} numbers in a loop.",
            "Write a thread-safe LRU cache backed by a {ds} in {lang}.",
            "Implement Dijkstra's shortest-path algorithm in {lang} with a priority queue and explain its complexity.",
        ],
        {
            "python": {"lang": ["Python", "Python 3"]},
            "javascript": {"lang": ["JavaScript", "TypeScript", "Node.js"]},
            "cpp": {"lang": ["C++", "modern C++"]},
            "rust": {"lang": ["Rust"]},
            "go": {"lang": ["Go", "Golang"]},
            "java": {"lang": ["Java", "Kotlin"]},
        },
        260,
    ),
    _d(
        "commonsense",
        [
            "Where would you most likely find {obj}?",
            "What is {obj} usually used for?",
            "Which is heavier, {obj} or {obj2}?",
            "Why might someone bring {obj} when {activity}?",
            "What happens if you leave {obj} outside overnight in winter?",
            "Is it a good idea to use {obj} while {activity}? Explain briefly.",
            "If you had no {obj}, what could you use instead when {activity}?",
            "Why would someone stop {activity} if they forgot {obj}?",
        ],
        {
            "kitchen": {
                "obj": ["a frying pan", "a whisk", "a cutting board", "a kettle", "an oven mitt"],
                "activity": ["cooking dinner", "baking bread", "making tea"],
            },
            "weather": {
                "obj": ["an umbrella", "a raincoat", "sunscreen", "a scarf", "snow boots"],
                "activity": ["walking in the rain", "going to the beach", "shovelling snow"],
            },
            "travel": {
                "obj": ["a passport", "a suitcase", "a map", "a phone charger", "a travel pillow"],
                "activity": ["flying abroad", "taking a long train ride", "hiking a trail"],
            },
            "animals": {
                "obj": ["a leash", "a bird cage", "a fish tank", "a cat bed", "a saddle"],
                "activity": ["walking a dog", "riding a horse", "feeding a parrot"],
            },
            "sports": {
                "obj": ["a tennis racket", "a helmet", "running shoes", "a football", "a swim cap"],
                "activity": ["playing tennis", "cycling to work", "swimming laps"],
            },
            "school": {
                "obj": ["a backpack", "a calculator", "a ruler", "a textbook", "an eraser"],
                "activity": ["taking a maths exam", "doing homework", "drawing a map"],
            },
        },
        45,
    ),
    _d(
        "reading",
        [
            "Read the passage and answer. {passage} Question: Who is the passage about?",
            "Read the passage and answer. {passage} Question: Where does {name} live?",
            "Read the passage and answer. {passage} Question: In which year did {name} move?",
            "Read the passage and answer. {passage} Question: What does {name} do for a living?",
            "Read the passage and answer. {passage} Question: Why did {name} move?",
            "Read the passage and answer. {passage} Question: What is the main idea of the passage?",
            "Read the passage and answer. {passage} Question: How did {name} most likely feel at first, and why?",
            "Read the passage and answer. {passage} Question: What can we infer about {name}'s plans?",
        ],
        {
            "teacher": {"job": ["a teacher", "a tutor", "a school librarian"]},
            "nurse": {"job": ["a nurse", "a paramedic", "a pharmacist"]},
            "engineer": {"job": ["an engineer", "a mechanic", "an electrician"]},
            "chef": {"job": ["a chef", "a baker", "a caterer"]},
            "artist": {"job": ["a painter", "a musician", "a photographer"]},
            "farmer": {"job": ["a farmer", "a gardener", "a beekeeper"]},
        },
        60,
    ),
    _d(
        "science",
        [
            "What is {concept}?",
            "Give an everyday example of {concept}.",
            "Explain how {concept} works.",
            "What is the difference between {concept} and {concept2}?",
            "Why does {concept} matter in {field}?",
            "What experiment could demonstrate {concept}?",
            "Derive the main equation behind {concept}.",
            "What are the open research questions about {concept} in {field}?",
        ],
        {
            "physics": {
                "concept": ["inertia", "friction", "momentum", "refraction", "entropy"],
                "field": ["physics"],
            },
            "chemistry": {
                "concept": ["oxidation", "a covalent bond", "pH", "catalysis", "an isotope"],
                "field": ["chemistry"],
            },
            "biology": {
                "concept": [
                    "photosynthesis",
                    "mitosis",
                    "natural selection",
                    "osmosis",
                    "DNA replication",
                ],
                "field": ["biology"],
            },
            "astronomy": {
                "concept": [
                    "a black hole",
                    "a supernova",
                    "redshift",
                    "an exoplanet transit",
                    "dark matter",
                ],
                "field": ["astronomy"],
            },
            "geology": {
                "concept": [
                    "plate tectonics",
                    "erosion",
                    "a volcano",
                    "sedimentary rock",
                    "an earthquake",
                ],
                "field": ["geology"],
            },
            "medicine": {
                "concept": [
                    "an antibody",
                    "a vaccine",
                    "blood pressure",
                    "insulin resistance",
                    "antibiotic resistance",
                ],
                "field": ["medicine"],
            },
        },
        170,
    ),
    _d(
        "translation",
        [
            "How do you say '{phrase}' in {lang}?",
            "Translate '{phrase}' into {lang}.",
            "Translate into {lang}: '{name} is going to the market tomorrow morning.'",
            "Translate this sentence into {lang} and keep it polite: '{phrase}, could you help me?'",
            "Translate into {lang} for a formal letter: 'Dear {name}, thank you for your message.'",
            "Translate the idiom '{idiom}' into {lang} while keeping its meaning.",
            "Translate into {lang} and explain the grammar: 'If I had known, I would have called {name}.'",
            "Translate this short poem line into {lang} and preserve the rhyme: '{idiom}, and the night is long.'",
        ],
        {
            "french": {"lang": ["French"]},
            "spanish": {"lang": ["Spanish"]},
            "german": {"lang": ["German"]},
            "japanese": {"lang": ["Japanese"]},
            "italian": {"lang": ["Italian"]},
            "portuguese": {"lang": ["Portuguese", "Brazilian Portuguese"]},
        },
        40,
    ),
    _d(
        "creative",
        [
            "Write a {genre} about {subject}.",
            "Write a short {genre} for a child about {subject}.",
            "Write a funny {genre} about {subject}.",
            "Write a {genre} about {subject} that ends with a twist.",
            "Write a {genre} about {subject} from the point of view of {name}.",
            "Write a {genre} about {subject} in the style of a noir detective story.",
            "Write a {genre} about {subject} where every line starts with the same letter.",
            "Write a {genre} about {subject} with an unreliable narrator and two timelines.",
        ],
        {
            "poem": {
                "genre": ["poem"],
                "subject": ["the sea", "autumn", "a lost key", "city lights"],
            },
            "story": {
                "genre": ["short story"],
                "subject": ["a robot", "a lighthouse", "a time traveller"],
            },
            "limerick": {"genre": ["limerick"], "subject": ["a cat", "a chef", "a sleepy owl"]},
            "haiku": {"genre": ["haiku"], "subject": ["rain", "the moon", "a cherry tree"]},
            "song": {"genre": ["song"], "subject": ["friendship", "a road trip", "summer"]},
            "dialogue": {
                "genre": ["dialogue"],
                "subject": ["two rivals", "a ghost and a baker", "old friends"],
            },
        },
        320,
    ),
    _d(
        "summarisation",
        [
            "Summarise in one sentence: {doc}",
            "Give three keywords for this text: {doc}",
            "Summarise for a busy manager: {doc}",
            "Write a headline for this text: {doc}",
            "List the action items in this text: {doc}",
            "Summarise this text and note its tone: {doc}",
            "Summarise this text, then say what is missing from it: {doc}",
            "Compare the claims in this text with common knowledge and summarise the differences: {doc}",
        ],
        {
            "news": {
                "doc": [
                    "The city council approved a new bike lane on Main Street after a long debate. Construction starts in {month}.",
                    "Heavy rain flooded several roads overnight; schools in the north of the county opened late.",
                ]
            },
            "meeting": {
                "doc": [
                    "Team meeting: the release moves to {month}. {name} will fix the login bug and write the test plan.",
                    "We agreed to cut the budget for travel and hire one more designer before {month}.",
                ]
            },
            "abstract": {
                "doc": [
                    "We propose a method that halves training time of image classifiers with no loss of accuracy on three benchmarks.",
                    "This study surveys {a} farms and finds that crop rotation raises yields in dry years.",
                ]
            },
            "review": {
                "doc": [
                    "The headphones sound great and the battery lasts {a} hours, but the case feels cheap.",
                    "Fast delivery, but the blender broke after {a} days and support never replied.",
                ]
            },
            "email": {
                "doc": [
                    "Hi {name}, the invoice from {month} is still unpaid. Please confirm the payment date.",
                    "Dear team, the office will be closed on Friday. Please work from home and check your email.",
                ]
            },
            "legal": {
                "doc": [
                    "The tenant shall give {a} days written notice before ending the lease, unless both parties agree otherwise.",
                    "Either party may terminate this agreement for material breach not cured within {a} days of notice.",
                ]
            },
        },
        60,
    ),
)

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
JOBS_CITY = [
    "Lisbon",
    "Oslo",
    "Nairobi",
    "Denver",
    "Osaka",
    "Lyon",
    "Quito",
    "Perth",
    "Dublin",
    "Hanoi",
]
PHRASES = [
    "good morning",
    "where is the station",
    "I am hungry",
    "thank you very much",
    "how much does this cost",
    "see you tomorrow",
]
IDIOMS = [
    "it is raining cats and dogs",
    "break a leg",
    "the early bird catches the worm",
    "once in a blue moon",
]
DATA_STRUCTURES = [
    "list",
    "array",
    "linked list",
    "hash map",
    "set",
    "queue",
    "stack",
    "dictionary",
]
ERRORS = [
    "index out of range",
    "null pointer dereference",
    "type mismatch",
    "stack overflow",
    "undefined variable",
]


def _passage(rng: np.random.Generator, name: str, job: str) -> str:
    city, year = rng.choice(JOBS_CITY), int(rng.integers(1990, 2024))
    reason = rng.choice(
        ["for a new job", "to be closer to family", "to study", "for a quieter life"]
    )
    return (
        f"{name} moved to {city} in {year} {reason}. {name} works as {job} and spends weekends "
        f"{rng.choice(['reading', 'hiking', 'painting', 'cooking'])}. At first the city felt "
        f"{rng.choice(['strange', 'cold', 'exciting', 'lonely'])}, but {name} soon made friends."
    )


@dataclass(frozen=True)
class Query:
    text: str
    domain: int
    template: int  # global id: domain * 48 + frame * 6 + topic
    frame: int
    topic: int


def _fill(rng: np.random.Generator, dom: Domain, frame: int, topic: str) -> str:
    slots = {k: str(rng.choice(v)) for k, v in dom.topics[topic].items()}
    name, name2 = (str(x) for x in rng.choice(NAMES, size=2, replace=False))
    a, b = int(rng.integers(2, 30)), int(rng.integers(2, 12))
    values = {
        "name": name,
        "name2": name2,
        "a": a,
        "b": b,
        "c": a * b + int(rng.integers(0, b)),
        "month": str(rng.choice(MONTHS)),
        "phrase": str(rng.choice(PHRASES)),
        "idiom": str(rng.choice(IDIOMS)),
        "ds": str(rng.choice(DATA_STRUCTURES)),
        "ds2": str(rng.choice(DATA_STRUCTURES)),
        "err": str(rng.choice(ERRORS)),
        **slots,
    }
    others = [o for t in dom.topics.values() for o in t.get("obj", []) if o != slots.get("obj")]
    if others:
        values["obj2"] = str(rng.choice(others))
    if "concept" in slots:
        pool = [c for c in dom.topics[topic]["concept"] if c != slots["concept"]]
        values["concept2"] = str(rng.choice(pool))
    if "job" in slots:
        values["passage"] = _passage(rng, name, slots["job"])
    if "doc" in slots:
        values["doc"] = slots["doc"].format(**values)
    text = dom.frames[frame].format(**values)
    return f"{rng.choice(PREFIXES)}{text}{rng.choice(SUFFIXES)}"


def sample_queries(
    n: int, rng: np.random.Generator, exclude: set[str] | None = None
) -> list[Query]:
    """``n`` distinct queries, domain and template uniform; none of them in ``exclude``."""
    seen = set(exclude or ())
    out: list[Query] = []
    while len(out) < n:
        d = int(rng.integers(len(DOMAINS)))
        dom = DOMAINS[d]
        frame, topic = int(rng.integers(len(dom.frames))), int(rng.integers(len(dom.topics)))
        text = _fill(rng, dom, frame, list(dom.topics)[topic])
        if text in seen:
            continue
        seen.add(text)
        out.append(Query(text, d, d * 48 + frame * 6 + topic, frame, topic))
    return out
