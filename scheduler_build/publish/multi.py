"""One artifact to several destinations, in order (ko's MultiPublisher): `--to daemon,registry,archive=FILE`.

Each destination is published in the order the user named them; the first failure (a UserError or an OSError,
e.g. a full disk) stops the rest and names its destination and what was already published, so a half-done
publish is never reported as done. A bug's exception passes unchanged, with its traceback.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Generic, Iterator

from scheduler_build.errors import UserError
from scheduler_build.publish.publisher import Artifact, Published, Publisher


@dataclass(frozen=True)
class PublishedEach:
    """Every destination's result, in order; `references` are all of theirs, in the same order."""

    results: list[tuple[str, Published]]  # (destination as --to names it, what it published)

    @property
    def references(self) -> list[str]:
        return [ref for _, published in self.results for ref in published.references]

    def as_dict(self) -> dict:
        """One destination: its own result (image.push --json keeps the shape it had before --to). Several:
        {"destinations": [{"to": NAME, ...its result}, ...]}, in order."""
        if len(self.results) == 1:
            return self.results[0][1].as_dict()
        return {"destinations": [{"to": name, **published.as_dict()} for name, published in self.results]}


@dataclass(frozen=True)
class MultiPublisher(Generic[Artifact]):
    destinations: list[tuple[str, Publisher[Artifact]]]  # (destination as --to names it, its publisher), in order

    def publish(self, artifact: Artifact) -> PublishedEach:
        done: list[tuple[str, Published]] = []
        for name, publisher in self.destinations:
            try:
                done.append((name, publisher.publish(artifact)))
            except (UserError, OSError) as exc:
                if len(self.destinations) == 1:
                    raise  # the only destination: its own message says where
                already = f" (already published to {', '.join(n for n, _ in done)})" if done else ""
                reason = exc.message if isinstance(exc, UserError) else str(exc)
                hint = exc.hint if isinstance(exc, UserError) else None
                named = UserError(f"--to {name} failed{already}: {reason}", hint)
                named.exit_code = getattr(exc, "exit_code", UserError.exit_code)
                raise named from exc
        return PublishedEach(done)

    @contextlib.contextmanager
    def assembling(self) -> Iterator[Callable | None]:
        """While the image is assembled: the `early` callback of the destination that takes each platform's image
        before the layout is done (the daemon's Preloader), entered and joined on exit; None when none does."""
        early = [getattr(p, "early") for _, p in self.destinations if getattr(p, "early", None) is not None]
        if not early:
            yield None
            return
        with contextlib.ExitStack() as stack:
            for each in early:
                stack.enter_context(each)
            yield early[0] if len(early) == 1 else (lambda image: [each(image) for each in early])
