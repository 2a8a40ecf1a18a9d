// SPDX-License-Identifier: MIT
// A minimal Conditional Tokens Framework (ERC-1155 outcome tokens) for the local chain.
// The external functions, events and id derivations are those of Gnosis ConditionalTokens,
// which Polymarket uses on Polygon; condition, collection and position ids computed here
// equal the real ones (collection ids use the same alt_bn128 point encoding).
pragma solidity ^0.8.24;

import {ERC1155Balances} from "./ERC1155Balances.sol";

interface IERC20Minimal {
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

interface IERC1155TokenReceiver {
    function onERC1155Received(address operator, address from, uint256 id, uint256 value, bytes calldata data)
        external
        returns (bytes4);
    function onERC1155BatchReceived(
        address operator,
        address from,
        uint256[] calldata ids,
        uint256[] calldata values,
        bytes calldata data
    ) external returns (bytes4);
}

contract ConditionalTokens is ERC1155Balances {
    // alt_bn128 field modulus and curve constant (y^2 = x^3 + 3).
    uint256 private constant P = 21888242871839275222246405745257275088696311157297823662689037894645226208583;
    uint256 private constant B = 3;

    mapping(bytes32 => uint256[]) public payoutNumerators;
    mapping(bytes32 => uint256) public payoutDenominator;

    event TransferBatch(
        address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values
    );
    event URI(string value, uint256 indexed id);

    event ConditionPreparation(
        bytes32 indexed conditionId, address indexed oracle, bytes32 indexed questionId, uint256 outcomeSlotCount
    );
    event ConditionResolution(
        bytes32 indexed conditionId,
        address indexed oracle,
        bytes32 indexed questionId,
        uint256 outcomeSlotCount,
        uint256[] payoutNumerators
    );
    event PositionSplit(
        address indexed stakeholder,
        address collateralToken,
        bytes32 indexed parentCollectionId,
        bytes32 indexed conditionId,
        uint256[] partition,
        uint256 amount
    );
    event PositionsMerge(
        address indexed stakeholder,
        address collateralToken,
        bytes32 indexed parentCollectionId,
        bytes32 indexed conditionId,
        uint256[] partition,
        uint256 amount
    );
    event PayoutRedemption(
        address indexed redeemer,
        address indexed collateralToken,
        bytes32 indexed parentCollectionId,
        bytes32 conditionId,
        uint256[] indexSets,
        uint256 payout
    );

    // ---- conditions -------------------------------------------------------------------

    function prepareCondition(address oracle, bytes32 questionId, uint256 outcomeSlotCount) external {
        require(outcomeSlotCount <= 256, "too many outcome slots");
        require(outcomeSlotCount > 1, "there should be more than one outcome slot");
        bytes32 conditionId = getConditionId(oracle, questionId, outcomeSlotCount);
        require(payoutNumerators[conditionId].length == 0, "condition already prepared");
        payoutNumerators[conditionId] = new uint256[](outcomeSlotCount);
        emit ConditionPreparation(conditionId, oracle, questionId, outcomeSlotCount);
    }

    function reportPayouts(bytes32 questionId, uint256[] calldata payouts) external {
        uint256 outcomeSlotCount = payouts.length;
        require(outcomeSlotCount > 1, "there should be more than one outcome slot");
        // the oracle is the caller: only the oracle named at preparation can resolve
        bytes32 conditionId = getConditionId(msg.sender, questionId, outcomeSlotCount);
        require(payoutNumerators[conditionId].length == outcomeSlotCount, "condition not prepared or found");
        require(payoutDenominator[conditionId] == 0, "payout denominator already set");
        uint256 den = 0;
        for (uint256 i = 0; i < outcomeSlotCount; i++) {
            den += payouts[i];
            payoutNumerators[conditionId][i] = payouts[i];
        }
        require(den > 0, "payout is all zeroes");
        payoutDenominator[conditionId] = den;
        emit ConditionResolution(conditionId, msg.sender, questionId, outcomeSlotCount, payoutNumerators[conditionId]);
    }

    function getOutcomeSlotCount(bytes32 conditionId) external view returns (uint256) {
        return payoutNumerators[conditionId].length;
    }

    // ---- positions ---------------------------------------------------------------------

    function splitPosition(
        address collateralToken,
        bytes32 parentCollectionId,
        bytes32 conditionId,
        uint256[] calldata partition,
        uint256 amount
    ) external {
        (uint256[] memory positionIds, uint256[] memory amounts, uint256 freeIndexSet) =
            _partitionPositions(collateralToken, parentCollectionId, conditionId, partition, amount);
        if (freeIndexSet == 0) {
            // a full partition: the stake comes from collateral or from the parent position
            if (parentCollectionId == bytes32(0)) {
                require(
                    IERC20Minimal(collateralToken).transferFrom(msg.sender, address(this), amount),
                    "could not receive collateral tokens"
                );
            } else {
                _burn(msg.sender, getPositionId(collateralToken, parentCollectionId), amount);
            }
        } else {
            // a partial partition splits the position of the union of its index sets
            uint256 fullIndexSet = (1 << payoutNumerators[conditionId].length) - 1;
            _burn(
                msg.sender,
                getPositionId(
                    collateralToken, getCollectionId(parentCollectionId, conditionId, fullIndexSet ^ freeIndexSet)
                ),
                amount
            );
        }
        _batchMint(msg.sender, positionIds, amounts);
        emit PositionSplit(msg.sender, collateralToken, parentCollectionId, conditionId, partition, amount);
    }

    function mergePositions(
        address collateralToken,
        bytes32 parentCollectionId,
        bytes32 conditionId,
        uint256[] calldata partition,
        uint256 amount
    ) external {
        (uint256[] memory positionIds, uint256[] memory amounts, uint256 freeIndexSet) =
            _partitionPositions(collateralToken, parentCollectionId, conditionId, partition, amount);
        _batchBurn(msg.sender, positionIds, amounts);
        if (freeIndexSet == 0) {
            if (parentCollectionId == bytes32(0)) {
                require(IERC20Minimal(collateralToken).transfer(msg.sender, amount), "could not send collateral tokens");
            } else {
                _mint(msg.sender, getPositionId(collateralToken, parentCollectionId), amount);
            }
        } else {
            uint256 fullIndexSet = (1 << payoutNumerators[conditionId].length) - 1;
            _mint(
                msg.sender,
                getPositionId(
                    collateralToken, getCollectionId(parentCollectionId, conditionId, fullIndexSet ^ freeIndexSet)
                ),
                amount
            );
        }
        emit PositionsMerge(msg.sender, collateralToken, parentCollectionId, conditionId, partition, amount);
    }

    function redeemPositions(
        address collateralToken,
        bytes32 parentCollectionId,
        bytes32 conditionId,
        uint256[] calldata indexSets
    ) external {
        uint256 den = payoutDenominator[conditionId];
        require(den > 0, "result for condition not received yet");
        uint256 outcomeSlotCount = payoutNumerators[conditionId].length;
        require(outcomeSlotCount > 0, "condition not prepared yet");
        uint256 fullIndexSet = (1 << outcomeSlotCount) - 1;
        uint256 totalPayout = 0;
        for (uint256 i = 0; i < indexSets.length; i++) {
            uint256 indexSet = indexSets[i];
            require(indexSet > 0 && indexSet < fullIndexSet, "got invalid index set");
            uint256 positionId =
                getPositionId(collateralToken, getCollectionId(parentCollectionId, conditionId, indexSet));
            uint256 payoutNumerator = 0;
            for (uint256 j = 0; j < outcomeSlotCount; j++) {
                if (indexSet & (1 << j) != 0) payoutNumerator += payoutNumerators[conditionId][j];
            }
            uint256 payoutStake = _balances[positionId][msg.sender];
            if (payoutStake > 0) {
                totalPayout += payoutStake * payoutNumerator / den;
                _burn(msg.sender, positionId, payoutStake);
            }
        }
        if (totalPayout > 0) {
            if (parentCollectionId == bytes32(0)) {
                require(
                    IERC20Minimal(collateralToken).transfer(msg.sender, totalPayout), "could not transfer payout"
                );
            } else {
                _mint(msg.sender, getPositionId(collateralToken, parentCollectionId), totalPayout);
            }
        }
        emit PayoutRedemption(msg.sender, collateralToken, parentCollectionId, conditionId, indexSets, totalPayout);
    }

    function _partitionPositions(
        address collateralToken,
        bytes32 parentCollectionId,
        bytes32 conditionId,
        uint256[] calldata partition,
        uint256 amount
    ) private view returns (uint256[] memory positionIds, uint256[] memory amounts, uint256 freeIndexSet) {
        require(partition.length > 1, "got empty or singleton partition");
        uint256 outcomeSlotCount = payoutNumerators[conditionId].length;
        require(outcomeSlotCount > 0, "condition not prepared yet");
        uint256 fullIndexSet = (1 << outcomeSlotCount) - 1;
        freeIndexSet = fullIndexSet;
        positionIds = new uint256[](partition.length);
        amounts = new uint256[](partition.length);
        for (uint256 i = 0; i < partition.length; i++) {
            uint256 indexSet = partition[i];
            require(indexSet > 0 && indexSet < fullIndexSet, "got invalid index set");
            require((indexSet & freeIndexSet) == indexSet, "partition not disjoint");
            freeIndexSet ^= indexSet;
            positionIds[i] = getPositionId(collateralToken, getCollectionId(parentCollectionId, conditionId, indexSet));
            amounts[i] = amount;
        }
    }

    // ---- ids ---------------------------------------------------------------------------

    function getConditionId(address oracle, bytes32 questionId, uint256 outcomeSlotCount)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(oracle, questionId, outcomeSlotCount));
    }

    /// Collection ids are compressed alt_bn128 points, so that nested collections combine by
    /// point addition and the order of conditions does not matter.
    function getCollectionId(bytes32 parentCollectionId, bytes32 conditionId, uint256 indexSet)
        public
        view
        returns (bytes32)
    {
        uint256 x1 = uint256(keccak256(abi.encodePacked(conditionId, indexSet)));
        bool odd = x1 >> 255 != 0;
        uint256 y1;
        uint256 yy;
        // step x until x^3 + 3 is a quadratic residue, i.e. x is on the curve
        do {
            x1 = addmod(x1, 1, P);
            yy = addmod(mulmod(x1, mulmod(x1, x1, P), P), B, P);
            y1 = _sqrtModP(yy);
        } while (mulmod(y1, y1, P) != yy);
        // the hash's top bit picks which of the two roots (by parity) is used
        if ((odd && y1 % 2 == 0) || (!odd && y1 % 2 == 1)) y1 = P - y1;

        uint256 x2 = uint256(parentCollectionId);
        if (x2 != 0) {
            // decompress the parent: bit 254 carries the parity of y
            odd = x2 >> 254 != 0;
            x2 = (x2 << 2) >> 2;
            yy = addmod(mulmod(x2, mulmod(x2, x2, P), P), B, P);
            uint256 y2 = _sqrtModP(yy);
            if ((odd && y2 % 2 == 0) || (!odd && y2 % 2 == 1)) y2 = P - y2;
            require(mulmod(y2, y2, P) == yy, "invalid parent collection ID");
            (bool ok, bytes memory sum) = address(6).staticcall(abi.encode(x1, y1, x2, y2));
            require(ok, "ecadd failed");
            (x1, y1) = abi.decode(sum, (uint256, uint256));
        }
        if (y1 % 2 == 1) x1 ^= 1 << 254;
        return bytes32(x1);
    }

    function getPositionId(address collateralToken, bytes32 collectionId) public pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(collateralToken, collectionId)));
    }

    /// A square root mod P (P = 3 mod 4, so a^((P+1)/4)), via the modexp precompile.
    function _sqrtModP(uint256 a) private view returns (uint256) {
        (bool ok, bytes memory out) =
            address(5).staticcall(abi.encode(uint256(32), uint256(32), uint256(32), a, (P + 1) / 4, P));
        require(ok, "modexp failed");
        return abi.decode(out, (uint256));
    }

    // ---- ERC-1155 ----------------------------------------------------------------------

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == 0xd9b67a26;
    }

    function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes calldata data) external {
        require(to != address(0), "ERC1155: target address must be non-zero");
        require(from == msg.sender || isApprovedForAll(from, msg.sender), "ERC1155: need operator approval");
        _move(from, to, id, value);
        emit TransferSingle(msg.sender, from, to, id, value);
        _checkSingle(from, to, id, value, data);
    }

    function safeBatchTransferFrom(
        address from,
        address to,
        uint256[] calldata ids,
        uint256[] calldata values,
        bytes calldata data
    ) external {
        require(ids.length == values.length, "ERC1155: IDs and values must have same lengths");
        require(to != address(0), "ERC1155: target address must be non-zero");
        require(from == msg.sender || isApprovedForAll(from, msg.sender), "ERC1155: need operator approval");
        for (uint256 i = 0; i < ids.length; i++) {
            _move(from, to, ids[i], values[i]);
        }
        emit TransferBatch(msg.sender, from, to, ids, values);
        _checkBatch(from, to, ids, values, data);
    }

    function _move(address from, address to, uint256 id, uint256 value) private {
        require(_balances[id][from] >= value, "ERC1155: insufficient balance");
        _balances[id][from] -= value;
        _balances[id][to] += value;
    }

    function _mint(address to, uint256 id, uint256 value) private {
        _balances[id][to] += value;
        emit TransferSingle(msg.sender, address(0), to, id, value);
        _checkSingle(address(0), to, id, value, "");
    }

    function _batchMint(address to, uint256[] memory ids, uint256[] memory values) private {
        for (uint256 i = 0; i < ids.length; i++) {
            _balances[ids[i]][to] += values[i];
        }
        emit TransferBatch(msg.sender, address(0), to, ids, values);
        _checkBatch(address(0), to, ids, values, "");
    }

    function _burn(address owner, uint256 id, uint256 value) private {
        require(_balances[id][owner] >= value, "ERC1155: insufficient balance");
        _balances[id][owner] -= value;
        emit TransferSingle(msg.sender, owner, address(0), id, value);
    }

    function _batchBurn(address owner, uint256[] memory ids, uint256[] memory values) private {
        for (uint256 i = 0; i < ids.length; i++) {
            require(_balances[ids[i]][owner] >= values[i], "ERC1155: insufficient balance");
            _balances[ids[i]][owner] -= values[i];
        }
        emit TransferBatch(msg.sender, owner, address(0), ids, values);
    }

    // contracts must accept ERC-1155 tokens explicitly, as in the real framework
    function _checkSingle(address from, address to, uint256 id, uint256 value, bytes memory data) private {
        if (to.code.length == 0) return;
        require(
            IERC1155TokenReceiver(to).onERC1155Received(msg.sender, from, id, value, data)
                == IERC1155TokenReceiver.onERC1155Received.selector,
            "ERC1155: got unknown value from onERC1155Received"
        );
    }

    function _checkBatch(address from, address to, uint256[] memory ids, uint256[] memory values, bytes memory data)
        private
    {
        if (to.code.length == 0) return;
        require(
            IERC1155TokenReceiver(to).onERC1155BatchReceived(msg.sender, from, ids, values, data)
                == IERC1155TokenReceiver.onERC1155BatchReceived.selector,
            "ERC1155: got unknown value from onERC1155BatchReceived"
        );
    }
}
