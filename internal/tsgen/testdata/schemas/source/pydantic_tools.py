"""Writes ../pydantic-real.json: tools whose schemas pydantic itself emits,
the way FastMCP builds them (arguments as one model, validation mode; the
result in serialization mode). Run: python3 pydantic_tools.py (pydantic 2)."""

import datetime
import enum
import json
import pathlib
from typing import Annotated, Any, Generic, Literal, Optional, TypeVar, Union

from pydantic import BaseModel, Field, computed_field, create_model


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(BaseModel):
    x: float
    y: float = 0


class Tree(BaseModel):
    """A tree of labels; each child is a Tree. Paths look like a/**/*.txt."""

    label: str
    children: list["Tree"] = []
    parent: Optional["Tree"] = None


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class Stamp(BaseModel):
    at: datetime.datetime

    @computed_field
    @property
    def year(self) -> int:
        return self.at.year


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]
    next: Optional[str] = None


def tool(name, description, args, result=None):
    fields = {k: v for k, v in args.items()}
    model = create_model(f"{name}Arguments", **fields)
    entry = {"name": name, "description": description, "inputSchema": model.model_json_schema()}
    if result is not None:
        entry["outputSchema"] = result.model_json_schema(mode="serialization")
    return entry


tools = [
    tool("draw", "Draws points and shapes.", {
        "points": (list[Point], ...),
        "color": (Color, Color.RED),
        "pair": (tuple[int, str], ...),
        "anything": (Any, None),
        "labels": (dict[str, int], {}),
        "note": (Optional[str], Field(None, description="Free text; may hold */ and \"quotes\"")),
        "mode": (Literal["fast", "slow", 3], "fast"),
    }),
    tool("walk", "Walks a tree.", {"tree": (Tree, ...), "depth": (Annotated[int, Field(ge=0, le=10)], 3)}, Tree),
    tool("adopt", "Adopts a pet.", {"pet": (Annotated[Union[Cat, Dog], Field(discriminator="kind")], ...)}),
    tool("stamp", "Stamps a time.", {"stamp": (Stamp, ...)}, Stamp),
    tool("page", "Lists a page of points.", {"cursor": (Optional[str], None)}, Page[Point]),
]
out = pathlib.Path(__file__).parent.parent / "pydantic-real.json"
out.write_text("[\n" + ",\n".join("  " + json.dumps(t, ensure_ascii=False) for t in tools) + "\n]\n")
