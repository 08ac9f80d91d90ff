"""pydantic-xml: deserializers collect per-field ValidationErrors in a dict local, then raise.

https://github.com/dapper91/pydantic-xml/issues/222 ("Severe memory leak"),
https://github.com/dapper91/pydantic-xml/pull/223. In 2.13.1 the model deserializer does
`field_errors[name] = err` for a field whose (sub-model) deserializer fails: each caught error's traceback holds the deserializer frame, whose
dict holds the error, and the combined error is raised from the same frame. 2.14.0 pops the
errors out of the dict (`into_validation_error`).
"""
# package: pydantic-xml
# leaking: 2.13.1
# fixed: 2.14.0
# python: 3.11+
# culprit: pydantic_xml.serializers.factories.model.ModelSerializer.deserialize

from pydantic_xml import BaseXmlModel, element


class Price(BaseXmlModel, tag="price"):
    amount: int = element()


class Item(BaseXmlModel, tag="item"):
    price: Price  # a sub-model: its ValidationError is raised inside the field's deserializer


def parse(document):
    payload = bytearray(4 << 20)
    try:
        Item.from_xml(document)
    except Exception:
        pass
    return len(payload)


parse(b"<item><price><amount>not-an-int</amount></price></item>")
