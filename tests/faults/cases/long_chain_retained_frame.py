# fault: a retained frame at the end of a 300,000-node linked list (issue 42, item 7): the path is folded, the report stays small
# run: scan --json {dir}/report.json -- {script}
# exit: 1
# text: more steps
# json-file: {dir}/report.json
import sys


class Node:
    __slots__ = ("next", "value")

    def __init__(self, value):
        self.next = None
        self.value = value


def keep():
    return sys._getframe()


def build(length):
    head = node = Node(None)
    for _ in range(length):
        node.next = Node(None)
        node = node.next
    node.value = keep()
    return head


HEAD = build(300_000)
