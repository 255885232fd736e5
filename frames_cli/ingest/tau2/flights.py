"""What an airline case shows of the flights: the status of the customer's own legs and, when the
customer asks for new flights, the bookable options on the routes and dates they ask about.

The options are kept to what a one-turn answer needs (the dates named or implied, the routes of
the reservations in play, bookable flights only): listing every leg of every reservation on three
days made the bundled cases three times larger without helping any answer.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from frames_cli.ingest.tau2.data import Tau2Db

#: The airline policy's "current time" (`policies/airline.md`): no flight before it can be booked.
TODAY = "2024-05-15"
#: A reservation id in the customer's words (six capitals or digits).
RESERVATION_ID = r"\b[A-Z0-9]{6}\b"

# A request for different flights (not a cabin, bag or passenger change on the same flights).
_NEW_FLIGHTS = re.compile(
    r"\bnon-?stop\b|\bpush(?:ed)? (?:\w+ ){0,3}back\b|\bmove (?:\w+ ){0,3}(?:back|up|forward)\b|\breschedul|\brebook"
    r"|\b(?:next|following|previous) day\b|\bby (?:one|a|1) day\b|\bday (?:earlier|later)\b"
    r"|\b(?:chang|modif|switch)\w*\s+(?:[\w']+\s+){0,5}?(?:flights?|dates?|trip|return|outbound|itinerary)\b",
    re.IGNORECASE,
)
_BOOK = re.compile(r"\bbook\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|without|no)\b|n't\b", re.IGNORECASE)
# "from ORD to PHL", "from sf to ny", "from New York to Chicago".
_FROM_TO = re.compile(r"\bfrom (\w+(?: \w+)?) to (\w+(?: \w+)?)")
_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(), start=1
    )
}
_DAY_MONTH = re.compile(
    r"\b("
    + "|".join(_MONTHS)
    + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b|\b(\d{1,2})(?:st|nd|rd|th)?\s+("
    + "|".join(_MONTHS)
    + r")\b",
    re.IGNORECASE,
)
_LATER = re.compile(r"\b(?:next|following) day\b|\bby (?:one|a|1) day\b|\bday later\b", re.IGNORECASE)
_EARLIER = re.compile(r"\bprevious day\b|\bday (?:earlier|before)\b", re.IGNORECASE)
# City names the tau2 airline tasks use for the airports of its database.
_CITIES = {
    "new york": ("JFK", "LGA", "EWR"), "ny": ("JFK", "LGA", "EWR"), "nyc": ("JFK", "LGA", "EWR"), "newark": ("EWR",),
    "san francisco": ("SFO",), "sf": ("SFO",), "los angeles": ("LAX",), "la": ("LAX",), "chicago": ("ORD",),
    "houston": ("IAH",), "denver": ("DEN",), "seattle": ("SEA",), "boston": ("BOS",), "miami": ("MIA",),
    "orlando": ("MCO",), "atlanta": ("ATL",), "las vegas": ("LAS",), "phoenix": ("PHX",), "philadelphia": ("PHL",),
    "detroit": ("DTW",), "charlotte": ("CLT",), "dallas": ("DFW",), "minneapolis": ("MSP",),
}
_CITY = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _CITIES), key=len, reverse=True)) + r")\b", re.IGNORECASE)


def flight_leg(db: Tau2Db, number: str, date: str, with_prices: bool) -> dict[str, Any] | None:
    """One flight on one date as the case shows it (route, scheduled times, status; seats and prices
    when `with_prices`), or None when the database has no such flight on that date."""
    flight = db.table("flights").get(number)
    if not flight or date not in flight.get("dates", {}):
        return None
    on_date = dict(flight["dates"][date])
    if not with_prices:
        on_date.pop("prices", None)
        on_date.pop("available_seats", None)
    times = {k: v for k, v in flight.items() if k.startswith("scheduled_")}
    return {
        "flight_number": number, "origin": flight["origin"], "destination": flight["destination"], "date": date,
        **times, **on_date,
    }


def named_dates(words: str, year: str) -> list[str]:
    """ISO dates the customer's words name: `2024-05-24`, "May 24", "24th May" (in `year`)."""
    dates = re.findall(r"\b\d{4}-\d{2}-\d{2}\b", words)
    for m in _DAY_MONTH.finditer(words):
        month, day = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if 1 <= int(day) <= 31:
            dates.append(f"{year}-{_MONTHS[month.lower()]:02d}-{int(day):02d}")
    return dates


def _airports(words: str) -> set[str]:
    """Airport codes the words name, directly ("IAH") or by city ("Houston", "sf")."""
    codes = set(re.findall(r"\b[A-Z]{3}\b", words))
    for m in _CITY.finditer(words):
        codes.update(_CITIES[m.group(1).lower()])
    return codes


def _leg_dates(leg_date: str, words: str) -> list[str]:
    """The dates a new flight for a leg may be on: the dates the words name, else the leg's date
    moved as the words say ("the next day"), else the leg's date."""
    named = named_dates(words, leg_date[:4])
    if named:
        return named
    day = _dt.date.fromisoformat(leg_date)
    shifts = [d for d, pattern in ((1, _LATER), (-1, _EARLIER)) if pattern.search(words)] or [0]
    return [str(day + _dt.timedelta(days=d)) for d in shifts]


def _asks(pattern: re.Pattern[str], words: str) -> bool:
    """Whether a sentence of `words` asks for `pattern` ("change the flight"), not negated before it
    ("You do NOT want to ... modify your flight", "without changing the flights")."""
    for sentence in re.split(r"[.!?\n]+", words):
        m = pattern.search(sentence)
        if m and not _NEGATION.search(sentence[: m.start()]):
            return True
    return False


def named_routes(words: str) -> list[tuple[str, str, str, bool]]:
    """(origin, destination, date, True) for each "from X to Y" the words ask to book or fly, X and Y
    airports or cities, on the dates they name; [] when they name no date (nothing to look up)."""
    if not (_asks(_BOOK, words) or _asks(_NEW_FLIGHTS, words)):
        return []
    dates = named_dates(words, TODAY[:4])
    routes = []
    for m in _FROM_TO.finditer(words):
        origins, destinations = _airports(m.group(1)), _airports(m.group(2))
        routes += [(o, d, day, True) for o in sorted(origins) for d in sorted(destinations) if o != d for day in dates]
    return routes


def requested_routes(records: list[dict[str, Any]], words: str) -> list[tuple[str, str, str, bool]]:
    """(origin, destination, date, one-stop too) the customer asks for different flights on; [] when
    the words ask for none (`_NEW_FLIGHTS`, not negated).

    The reservations they name by id, else the upcoming ones touching an airport or city their words
    name, else every reservation with a flight after `TODAY`; for each, its legs (direct) and, from a
    leg that starts a direction of the trip, that whole way (direct, and one-stop when the leg is
    not the whole way), on the dates of `_leg_dates`.
    """
    if not _asks(_NEW_FLIGHTS, words):
        return []
    named = set(re.findall(RESERVATION_ID, words))
    airports = _airports(words)
    upcoming = [r for r in records if any(f.get("date", "") > TODAY for f in r.get("flights", []))]
    chosen = (
        [r for r in records if r.get("reservation_id") in named]
        or [
            r for r in upcoming
            if airports & {x for leg in r.get("flights", []) for x in (leg.get("origin"), leg.get("destination"))}
        ]
        or upcoming
    )
    routes = []
    for record in chosen:
        for leg in record.get("flights", []):
            if not (leg.get("date") and leg.get("origin")):
                continue
            dates = _leg_dates(leg["date"], words)
            routes += [(leg["origin"], leg["destination"], d, False) for d in dates]
            # A leg that starts a direction of the trip also stands for the whole way ("IAH to SEA" via LAS).
            for origin, destination in (
                (record.get("origin"), record.get("destination")), (record.get("destination"), record.get("origin")),
            ):
                if origin and leg["origin"] == origin and leg["destination"] != destination:
                    routes += [(origin, destination, d, True) for d in dates]
    return routes


def airline_context(
    db: Tau2Db, records: list[dict[str, Any]], actions: list[dict[str, Any]], about_flights: bool, words: str
) -> dict[str, Any]:
    """`flight_status`: the customer's legs (with seats and prices when the request is about
    flights); `flight_options`: bookable direct and one-stop flights on the routes in play (the
    reference searches and bookings, and `requested_routes`), when there are any.

    Shapes: `flight_status` and `flight_options` are lists of `flight_leg` dicts, options sorted by
    (flight number, date).
    """
    status = [
        leg
        for r in records
        for f in r.get("flights", [])
        if (leg := flight_leg(db, f["flight_number"], f["date"], about_flights)) is not None
    ]
    context: dict[str, Any] = {"flight_status": status}
    if not about_flights:
        return context
    flights = db.table("flights")
    options = _flight_options(db, flights, _routes(actions, records, flights) + requested_routes(records, words)
                              + named_routes(words))
    if options:
        context["flight_options"] = [options[k] for k in sorted(options)]
    return context


def _routes(
    actions: list[dict[str, Any]], records: list[dict[str, Any]], flights: dict[str, Any]
) -> list[tuple[str, str, str, bool]]:
    """(origin, destination, date, one-stop) of the reference's flight searches, and of the flights it
    books that are not already the reservation's (a cabin change keeps them)."""
    routes: list[tuple[str, str, str, bool]] = []
    for action in actions:
        args: dict[str, Any] = action.get("arguments") or {}
        origin, destination, date = args.get("origin"), args.get("destination"), args.get("date")
        searches = action["name"] in ("search_direct_flight", "search_onestop_flight")
        # A search that names no origin, destination or date finds no flight.
        if searches and origin is not None and destination is not None and date is not None:
            routes.append((origin, destination, date, action["name"] == "search_onestop_flight"))
        # A cabin change keeps the reservation's flights: their prices are in `flight_status` already.
        current = {
            (f.get("flight_number"), f.get("date")) for r in records
            if r.get("reservation_id") == args.get("reservation_id") for f in r.get("flights", [])
        }
        for f in args.get("flights") or []:
            flight = flights.get(f.get("flight_number"), {})
            if flight and (f.get("flight_number"), f.get("date")) not in current:
                routes.append((flight["origin"], flight["destination"], f.get("date"), False))
    return routes


def _flight_options(
    db: Tau2Db, flights: dict[str, Any], routes: list[tuple[str, str, str, bool]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """(flight number, date) → `flight_leg` of each bookable direct flight on `routes`, and of both
    legs of each bookable one-stop connection on the routes that allow one."""

    def bookable(number: str, date: str) -> bool:
        return flights[number].get("dates", {}).get(date, {}).get("status") == "available"

    def add(number: str, date: str) -> None:
        leg = flight_leg(db, number, date, True)
        if leg is not None:  # always: a bookable flight is in the database on its date
            options[(number, date)] = leg

    options: dict[tuple[str, str], dict[str, Any]] = {}
    for origin, destination, date, one_stop in dict.fromkeys(routes):
        for number in [n for n, f in flights.items() if f["origin"] == origin and bookable(n, date)]:
            if flights[number]["destination"] == destination:
                add(number, date)
            elif one_stop:
                hub = flights[number]["destination"]
                seconds = [
                    n for n, f in flights.items()
                    if f["origin"] == hub and f["destination"] == destination and bookable(n, date)
                ]
                for second in seconds:
                    add(number, date)
                    add(second, date)
    return options

